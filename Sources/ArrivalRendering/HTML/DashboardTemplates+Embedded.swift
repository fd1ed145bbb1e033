// swift-format-ignore-file
// Generated from Dashboards/templates/*.mustache by
// `RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests`. Do not edit: edit the templates.

extension DashboardTemplates {
    /// (name, text) of every template, by name.
    static let embedded: [(name: String, text: String)] = [
        ("chart", #####"""
{{% CONTENT_TYPE: ARRIVAL_HTML}}
<svg class="chart" id="{{id}}" viewBox="0 0 {{width}} {{height}}" width="{{width}}" height="{{height}}" style="max-width:{{width}}px" role="img" aria-labelledby="{{id}}-title" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg"><title id="{{id}}-title">{{title}}</title>
{{#rules}}<line x1="{{x1}}" y1="{{y1}}" x2="{{x2}}" y2="{{y2}}" class="{{cls}}"/>{{/rules}}
{{#rects}}<rect x="{{x}}" y="{{y}}" width="{{w}}" height="{{h}}" class="{{cls}}"><title>{{tip}}</title></rect>
{{/rects}}
{{#lines}}<polyline points="{{points}}" class="{{cls}}"/>{{/lines}}
{{#dots}}<circle cx="{{cx}}" cy="{{cy}}" r="3.5" class="{{cls}}"><title>{{tip}}</title></circle>{{/dots}}
{{#labels}}<text x="{{x}}" y="{{y}}" text-anchor="{{anchor}}" class="{{cls}}">{{text}}</text>{{/labels}}
</svg>

"""#####),
        ("report", #####"""
{{% CONTENT_TYPE: ARRIVAL_HTML}}
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{title}}</title>
<style>
{{>style}}
</style>
</head>
<body>
<header class="top"><div class="inner">
<h1>Live Activity delivery · {{windowText}}</h1>
<p class="meta">Generated {{generated}} by arrival {{version}} · {{sourcesSummary}}</p>
<nav class="toc" aria-label="Sections"><a href="#funnel-card">Funnel</a><a href="#loss-card">Why lost</a><a href="#starts-card">Push-to-start</a>{{#channelsTable}}<a href="#channels-card">Channels</a>{{/channelsTable}}{{#outliersSummary}}<a href="#outliers-card">Devices</a>{{/outliersSummary}}{{#appleSummary}}<a href="#apple-card">Apple</a>{{/appleSummary}}<a href="#tokens-card">Tokens to purge</a><a href="#time-card">Over time</a><a href="#reasons-card">APNs rejections</a><a href="#latency-card">Latency</a>{{#throttlingNote}}<a href="#throttling-card">Throttling</a>{{/throttlingNote}}<a href="#breakdowns">Breakdowns</a>{{#trendTable}}<a href="#trend-card">Trend</a>{{/trendTable}}<a href="#activities-card">Activities</a><a href="#quality-card">Data quality</a><a href="#sources-card">Sources</a></nav>
</div></header>
<main>
<div class="verdict" role="status">
<p>{{verdict}}</p>
<ul>{{#verdictPoints}}<li>{{text}}</li>{{/verdictPoints}}</ul>
</div>

<ul class="tiles" aria-label="Headline metrics">
{{#tiles}}<li class="tile {{tone}}">
<p class="name">{{name}}</p>
<p class="value">{{value}}</p>
<p class="detail">{{detail}}</p>
{{#deltas}}<p class="delta {{tone}}"><span class="arrow" aria-hidden="true">{{arrow}}</span>{{text}} {{against}} <span class="word">({{word}})</span></p>
{{/deltas}}
</li>
{{/tiles}}
</ul>
{{#comparisonNote}}<p class="note">{{comparisonNote}}</p>{{/comparisonNote}}

<section class="card" id="funnel-card">
<h2>From request to screen</h2>
<p class="note">Every APNs request, the requests APNs accepted, the logical updates (one per activity and seq, retries merged) split by what became of them, and the updates the widget showed.</p>
<ul class="legend">{{#legend}}<li><span class="swatch {{cls}}"></span>{{name}}</li>{{/legend}}</ul>
{{#funnel}}{{>chart}}{{/funnel}}
<div class="table-wrap">
<table>
<caption>What became of the accepted updates</caption>
<thead><tr><th scope="col">outcome</th><th scope="col" class="num">updates</th><th scope="col" class="num">share of accepted</th><th scope="col" class="text">meaning</th></tr></thead>
<tbody>
{{#outcomes}}<tr><td><span class="badge {{cls}}">{{name}}</span></td><td class="num">{{count}}</td><td class="num">{{share}}</td><td class="text">{{meaning}}</td></tr>
{{/outcomes}}
</tbody>
</table>
</div>
{{#funnelTable}}{{>table}}{{/funnelTable}}
</section>

<section class="card" id="loss-card">
<h2>Why updates were lost</h2>
<p class="note">{{lossSummary}}</p>
{{#lossTable}}{{>table}}{{/lossTable}}
</section>

<section class="card" id="starts-card">
<h2>Push-to-start</h2>
<p class="note">{{startsSummary}}</p>
{{#startsTable}}{{>table}}{{/startsTable}}
</section>

{{#channelsTable}}
<section class="card" id="channels-card">
<h2>Broadcast channels</h2>
<p class="note">{{channelsSummary}}</p>
{{>table}}
</section>

{{/channelsTable}}
{{#outliersSummary}}
<section class="card" id="outliers-card">
<h2>Devices far below the fleet</h2>
<p class="note">{{outliersSummary}}</p>
{{#outliersTable}}{{>table}}{{/outliersTable}}
</section>

{{/outliersSummary}}
{{#appleSummary}}
<section class="card" id="apple-card">
<h2>Apple's numbers beside arrival's</h2>
<p class="note">{{appleSummary}}</p>
{{#appleTables}}{{>table}}{{/appleTables}}
</section>

{{/appleSummary}}
<section class="card" id="tokens-card">
<h2>Tokens to purge</h2>
<p class="note">{{deadTokensSummary}}</p>
{{#deadTokensTable}}{{>table}}{{/deadTokensTable}}
</section>

<section class="card" id="time-card">
<h2>{{timeTitle}}</h2>
{{#timeChart}}
<p class="note">Bars: updates by outcome (colours as above). Dashed line: arrival rate.</p>
{{>chart}}
{{/timeChart}}
{{#timeTable}}{{>table}}{{/timeTable}}
{{^timeChart}}<p class="note">No updates in this window.</p>{{/timeChart}}
</section>

<section class="card" id="reasons-card">
<h2>Rejected requests by APNs reason</h2>
<p class="note">{{rejectedTotal}} requests were not accepted. What each reason means and what to do:</p>
{{#reasonChart}}{{>chart}}{{/reasonChart}}
<div class="table-wrap">
<table>
<caption>Rejections by reason</caption>
<thead><tr><th scope="col">reason</th><th scope="col" class="num">requests</th><th scope="col" class="num">share</th><th scope="col" class="text">meaning</th><th scope="col" class="text">what to do</th></tr></thead>
<tbody>
{{#reasons}}<tr><td class="mono">{{reason}}</td><td class="num">{{count}}</td><td class="num">{{share}}</td><td class="text">{{meaning}}</td><td class="text">{{action}}</td></tr>
{{/reasons}}
{{^reasons}}<tr><td colspan="5" class="text">APNs accepted every request.</td></tr>{{/reasons}}
</tbody>
</table>
</div>
</section>

<section class="card" id="latency-card">
<h2>Render latency</h2>
<p class="note">{{latencySummary}}</p>
{{#latencyChart}}{{>chart}}{{/latencyChart}}
{{#latencyTable}}{{>table}}{{/latencyTable}}
</section>

{{#throttlingNote}}
<section class="card" id="throttling-card">
<h2>Is Apple throttling these updates?</h2>
<p class="note">{{throttlingNote}}</p>
{{#throttling}}
<h3>{{title}}</h3>
{{#chart}}{{>chart}}{{/chart}}
{{#table}}{{>table}}{{/table}}
{{/throttling}}
</section>
{{/throttlingNote}}

<section class="card" id="breakdowns">
<h2>Breakdowns</h2>
<p class="note">Bars: arrival rate = rendered ÷ (rendered + superseded + lost). App and priority come from the update's deciding request; OS and app version from the activity's earliest device evidence.</p>
{{#breakdowns}}
<h3>{{title}}</h3>
{{#chart}}{{>chart}}{{/chart}}
{{#table}}{{>table}}{{/table}}
{{/breakdowns}}
</section>

{{#trendTable}}
<section class="card" id="trend-card">
<h2>Trend</h2>
<div class="trends">{{#trendCharts}}{{>chart}}{{/trendCharts}}</div>
{{>table}}
</section>
{{/trendTable}}

<section class="card long" id="activities-card">
<h2>Activities that lost the most updates</h2>
<p class="note">{{activitiesNote}} "Did not show" = not accepted by APNs, lost, stale timestamp, ended or expired.</p>
{{#activities}}
<div class="activity">
<h3>{{id}}</h3>
<p class="note">{{app}} · iOS {{os}} · app {{appVersion}} · {{devices}} · {{summary}}</p>
<div class="table-wrap">
<table>
<caption>Timeline of {{id}}</caption>
<thead><tr><th scope="col" class="num">seq</th><th scope="col" class="text">event</th><th scope="col" class="num">accepted (or sent)</th><th scope="col" class="text">APNs answers (sent → status)</th><th scope="col" class="text">outcome</th><th scope="col" class="text">first rendered (after accept)</th><th scope="col" class="text">where</th></tr></thead>
<tbody>
{{#steps}}<tr><td class="num">{{seq}}</td><td class="nowrap">{{event}}</td><td class="num">{{at}}</td><td class="text mono">{{answers}}</td><td class="nowrap"><span class="badge {{outcomeCls}}">{{outcome}}</span></td><td class="text">{{rendered}}</td><td class="text">{{surfaces}}</td></tr>
{{/steps}}
</tbody>
</table>
{{#more}}<p class="note">{{more}}</p>{{/more}}
</div>
</div>
{{/activities}}
{{^activities}}<p>Every update of this window showed or was replaced by a newer one that did.</p>{{/activities}}
</section>

<section class="card" id="quality-card">
<h2>Data quality</h2>
<p class="note">Malformed lines, duplicates and skipped files cover everything ingested; the other counts cover this window.{{#pathRoot}} File paths are relative to <span class="mono">{{pathRoot}}</span>.{{/pathRoot}}</p>
{{#qualitySummary}}{{>table}}{{/qualitySummary}}
{{#malformedTable}}{{>table}}{{/malformedTable}}
{{#duplicatesTable}}{{>table}}{{/duplicatesTable}}
{{#skippedTable}}{{>table}}{{/skippedTable}}
</section>

<section class="card" id="sources-card">
<h2>Data sources</h2>
<p class="note">{{sourcesSummary}}{{#pathRoot}} File paths are relative to <span class="mono">{{pathRoot}}</span>.{{/pathRoot}}</p>
{{#sources}}{{>table}}{{/sources}}
</section>
<footer>arrival · figures agree with <span class="mono">arrival report --format json</span> for the same window · outcome rules: the data contract, section 3</footer>
</main>
</body>
</html>

"""#####),
        ("style", #####"""
{{% CONTENT_TYPE: ARRIVAL_HTML}}
/* Okabe–Ito colours: told apart by readers with any common colour-vision deficiency. */
:root {
  --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --paper: #ffffff; --wash: #f4f6fa;
  --blue: #0072B2; --sky: #56B4E9; --orange: #E69F00; --green: #009E73; --purple: #CC79A7;
  --vermillion: #D55E00; --grey: #4d4d4d; --yellow: #F0E442;
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--wash); }
main { max-width: 1040px; margin: 0 auto; padding: 24px 20px 48px; }
header.top { background: var(--paper); border-bottom: 1px solid var(--line); }
header.top .inner { max-width: 1040px; margin: 0 auto; padding: 20px 20px 16px; }
h1 { font-size: 24px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 18px; margin: 0 0 10px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
.meta { color: var(--muted); font-size: 13px; margin: 0; }
.verdict { background: var(--paper); border-left: 6px solid var(--blue); padding: 14px 18px; margin: 20px 0; border-radius: 6px; box-shadow: 0 1px 2px rgba(0,0,0,.05); }
.verdict p { font-size: 19px; margin: 0 0 6px; font-weight: 600; }
.verdict ul { margin: 4px 0 0; padding-left: 20px; color: var(--ink); }
.tiles { display: grid; grid-template-columns: repeat(3, 1fr); gap: 12px; margin: 0 0 8px; padding: 0; list-style: none; }
.tile { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.tile.key { border-top: 4px solid var(--blue); }
.tile .name { font-size: 13px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; margin: 0; }
.tile .value { font-size: 28px; font-weight: 700; margin: 2px 0; font-variant-numeric: tabular-nums; }
.tile .detail { font-size: 12.5px; color: var(--muted); margin: 0 0 6px; }
.delta { font-size: 12.5px; margin: 0; font-variant-numeric: tabular-nums; }
.delta.good { color: var(--blue); }
.delta.bad { color: var(--vermillion); }
.delta.flat { color: var(--muted); }
.delta .arrow { display: inline-block; width: 1em; }
.note { color: var(--muted); font-size: 12.5px; margin: 6px 0; }
section.card { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; margin: 16px 0; }
svg.chart { display: block; width: 100%; height: auto; margin: 6px 0 4px; overflow: visible; }
svg text { font: 12px -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: var(--ink); }
svg text.strong { font-weight: 600; }
svg text.small { font-size: 10.5px; fill: var(--muted); }
svg text.rate { fill: var(--grey); }
svg text.inverse { fill: #fff; font-weight: 600; }
svg .grid { stroke: var(--line); stroke-width: 1; }
.o-rendered, .o-accepted { fill: var(--blue); background: var(--blue); }
.o-superseded { fill: var(--sky); background: var(--sky); }
.o-stale { fill: var(--orange); background: var(--orange); }
.o-ended { fill: var(--green); background: var(--green); }
.o-expired { fill: var(--purple); background: var(--purple); }
.o-lost { fill: var(--vermillion); background: var(--vermillion); }
.o-dismissed { fill: var(--yellow); background: var(--yellow); }
.o-rejected { fill: var(--grey); background: var(--grey); }
.track { fill: #e8ecf2; }
.rate-line { fill: none; stroke: var(--ink); stroke-width: 2; stroke-dasharray: 5 3; }
.rate-dot { fill: var(--paper); stroke: var(--ink); stroke-width: 1.5; }
.trend-line { fill: none; stroke: var(--blue); stroke-width: 2; }
.trend-dot { fill: var(--blue); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 4px 0 8px; padding: 0; list-style: none; font-size: 13px; }
.legend .swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.badge { display: inline-block; white-space: nowrap; padding: 0 7px; border-radius: 10px; color: #fff; font-size: 12px; font-weight: 600; }
.badge.o-superseded, .badge.o-stale, .badge.o-dismissed { color: #1d2330; }
.trends { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 8px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 6px 0; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; color: var(--muted); font-size: 12.5px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
th { background: var(--wash); font-weight: 600; }
td { overflow-wrap: break-word; }
.activity { border-top: 1px solid var(--line); padding: 10px 0 4px; }
.activity h3 { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13.5px; overflow-wrap: anywhere; }
.mono { font-family: ui-monospace, Menlo, Consolas, monospace; }
nav.toc { font-size: 13px; margin-top: 8px; }
nav.toc a { color: var(--blue); margin-right: 12px; text-decoration: none; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin: 24px 0; }
@media (max-width: 700px) { .tiles { grid-template-columns: repeat(2, 1fr); } }
@media print {
  body { background: #fff; font-size: 11pt; }
  main { max-width: none; padding: 0; }
  header.top { border: 0; }
  nav.toc { display: none; }
  section.card, .tile, .verdict { box-shadow: none; border-color: #999; break-inside: avoid; page-break-inside: avoid; }
  section.card.long { break-inside: auto; page-break-inside: auto; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
}

"""#####),
        ("table", #####"""
{{% CONTENT_TYPE: ARRIVAL_HTML}}
<div class="table-wrap">
<table>
<caption>{{caption}}</caption>
<thead><tr>{{#header}}<th scope="col"{{#num}} class="num"{{/num}}>{{text}}</th>{{/header}}</tr></thead>
<tbody>
{{#rows}}<tr>{{#cells}}<td{{#num}} class="num"{{/num}}>{{text}}</td>{{/cells}}</tr>
{{/rows}}
</tbody>
</table>
{{#tableNote}}<p class="note">{{tableNote}}</p>{{/tableNote}}
</div>

"""#####),
    ]
}
