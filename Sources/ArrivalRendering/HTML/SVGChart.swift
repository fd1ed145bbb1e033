/// The geometry of one inline SVG chart, computed here and drawn by the
/// `chart` template: only numbers, class names and labels, no markup.
struct SVGChart {
    struct Rect {
        var x: String, y: String, w: String, h: String
        var cls: String
        var tip: String
    }

    struct Line {
        var points: String
        var cls: String
    }

    struct Dot {
        var cx: String, cy: String
        var cls: String
        var tip: String
    }

    struct Label {
        var x: String, y: String
        var text: String
        var anchor: String
        var cls: String
    }

    struct Rule {
        var x1: String, y1: String, x2: String, y2: String
        var cls: String
    }

    var id: String
    var title: String
    var width: Int
    var height: Int
    var rects: [Rect] = []
    var lines: [Line] = []
    var dots: [Dot] = []
    var labels: [Label] = []
    var rules: [Rule] = []

    init(id: String, title: String, width: Int, height: Int) {
        self.id = id
        self.title = title
        self.width = width
        self.height = height
    }

    mutating func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, _ cls: String, tip: String) {
        rects.append(Rect(x: n(x), y: n(y), w: n(max(0, w)), h: n(max(0, h)), cls: cls, tip: tip))
    }

    mutating func label(_ x: Double, _ y: Double, _ text: String, anchor: String = "start", cls: String = "lbl") {
        labels.append(Label(x: n(x), y: n(y), text: text, anchor: anchor, cls: cls))
    }

    mutating func rule(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, cls: String = "grid") {
        rules.append(Rule(x1: n(x1), y1: n(y1), x2: n(x2), y2: n(y2), cls: cls))
    }

    mutating func line(_ points: [(Double, Double)], cls: String) {
        guard points.count > 1 else { return }
        lines.append(Line(points: points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " "), cls: cls))
    }

    mutating func dot(_ x: Double, _ y: Double, cls: String, tip: String) {
        dots.append(Dot(cx: n(x), cy: n(y), cls: cls, tip: tip))
    }

    /// One decimal is plenty for a screen and keeps the file small.
    private func n(_ value: Double) -> String {
        let scaled = (value * 10).rounded() / 10
        return scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)
    }
}
