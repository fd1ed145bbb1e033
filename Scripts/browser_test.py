#!/usr/bin/env python3
"""Opens an HTML report in headless Chromium through the DevTools protocol and
fails when the page logs an error, fetches anything, or shows a chart (svg)
without a size, on screen or in print. Saves a screenshot and a PDF.

    browser_test.py REPORT.html OUT_DIR [--chromium PATH] [--width 1280] [--height 1800]

Standard library only (a small WebSocket client below), so CI needs nothing
from PyPI. Exit status 0 when the page passes, 1 when it does not, 2 when the
browser could not be driven.
"""
import argparse
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, masking, ping."""

    def __init__(self, url, timeout=30):
        assert url.startswith("ws://")
        host_port, _, path = url[5:].partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            response += chunk
        head, _, self.buffer = response.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"DevTools refused the WebSocket: {head[:200]!r}")

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text):
        payload = text.encode()
        header = bytearray([0x81])
        n = len(payload)
        if n < 126:
            header.append(0x80 | n)
        elif n < 65536:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(header) + mask + masked)

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            if opcode == 0x9:  # ping: answer with a pong
                self.sock.sendall(bytes([0x8A, 0x80 | len(data)]) + b"\0\0\0\0" + data)
                continue
            message += data
            if b0 & 0x80:
                return message.decode()


class DevTools:
    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0
        self.events = []

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        deadline = time.time() + timeout
        while time.time() < deadline:
            message = json.loads(self.ws.receive())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
        raise TimeoutError(method)

    def wait_for(self, event, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for e in self.events:
                if e["method"] == event:
                    return e
            self.events.append(json.loads(self.ws.receive()))
        raise TimeoutError(event)


CHART_SIZES = """
(() => Array.from(document.querySelectorAll('svg')).map(svg => {
  const r = svg.getBoundingClientRect();
  return {id: svg.id || '(no id)', width: r.width, height: r.height};
}))()
"""


def find_chromium(given):
    for name in [given, "chromium", "chromium-browser", "google-chrome"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("out_dir")
    parser.add_argument("--chromium")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1800)
    parser.add_argument("--section", action="append", default=[],
                        help="the id of a section that must be on the page, shown: its own screenshot is ID.png")
    parser.add_argument("--in-order", action="append", default=[], metavar="ID:A,B,C",
                        help="the texts A, B, C must appear in this order inside the element ID")
    args = parser.parse_args()
    chromium = find_chromium(args.chromium)
    if not chromium:
        print("browser test: no chromium on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    os.makedirs(args.out_dir, exist_ok=True)
    report_url = "file://" + os.path.abspath(args.report)
    profile = tempfile.mkdtemp(prefix="arrival-chromium-")
    browser = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--hide-scrollbars", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", f"--window-size={args.width},{args.height}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems = []
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 60
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if browser.poll() is not None or time.time() > deadline:
                print("browser test: chromium did not start", file=sys.stderr)
                return 2
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            pages = [t for t in json.load(response) if t.get("type") == "page"]
        if not pages:
            print("browser test: chromium has no page to drive", file=sys.stderr)
            return 2
        tools = DevTools(pages[0]["webSocketDebuggerUrl"])
        for domain in ["Page", "Runtime", "Log", "Network"]:
            tools.call(domain + ".enable")
        tools.call("Emulation.setDeviceMetricsOverride", width=args.width, height=args.height,
                   deviceScaleFactor=1, mobile=False)
        tools.call("Page.navigate", url=report_url)
        tools.wait_for("Page.loadEventFired")
        time.sleep(0.5)  # late console messages

        sizes = {}
        for media in ["screen", "print"]:
            tools.call("Emulation.setEmulatedMedia", media=media)
            result = tools.call("Runtime.evaluate", expression=CHART_SIZES, returnByValue=True)
            charts = result["result"]["value"]
            sizes[media] = charts
            if not charts:
                problems.append(f"{media}: the page has no chart (svg)")
            for chart in charts:
                if chart["width"] <= 0 or chart["height"] <= 0:
                    problems.append(f"{media}: chart {chart['id']} is {chart['width']}×{chart['height']}")
        tools.call("Emulation.setEmulatedMedia", media="screen")

        shot = tools.call("Page.captureScreenshot", format="png",
                          clip={"x": 0, "y": 0, "width": args.width, "height": args.height, "scale": 1})
        with open(os.path.join(args.out_dir, "report.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        metrics = tools.call("Page.getLayoutMetrics")
        full_height = int(metrics["cssContentSize"]["height"])
        tools.call("Emulation.setDeviceMetricsOverride", width=args.width, height=full_height,
                   deviceScaleFactor=1, mobile=False)
        full = tools.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        with open(os.path.join(args.out_dir, "report-full.png"), "wb") as f:
            f.write(base64.b64decode(full["data"]))
        for section in args.section:
            box = tools.call("Runtime.evaluate", returnByValue=True, expression=(
                f"(() => {{ const e = document.getElementById({json.dumps(section)}); if (!e) return null; "
                "const r = e.getBoundingClientRect(); "
                "return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height}; })()"))
            rect = box["result"].get("value")
            if not rect or rect["width"] <= 0 or rect["height"] <= 0:
                problems.append(f"section #{section} is missing or has no size")
                continue
            shot = tools.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                              clip={**rect, "scale": 1})
            with open(os.path.join(args.out_dir, section + ".png"), "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        for check in args.in_order:
            element, texts = check.split(":", 1)
            found = tools.call("Runtime.evaluate", returnByValue=True, expression=(
                f"(() => {{ const e = document.getElementById({json.dumps(element)}); "
                f"if (!e) return null; const t = e.innerText; "
                f"return {json.dumps(texts.split(','))}.map(x => t.indexOf(x)); }})()"))
            places = found["result"].get("value")
            if places is None or -1 in places or places != sorted(places):
                problems.append(f"#{element}: {texts} not all shown in this order ({places})")

        pdf = tools.call("Page.printToPDF", printBackground=True, preferCSSPageSize=False, timeout=120)
        with open(os.path.join(args.out_dir, "report.pdf"), "wb") as f:
            f.write(base64.b64decode(pdf["data"]))

        for e in tools.events:
            method, params = e["method"], e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                problems.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                problems.append("exception: " + params.get("exceptionDetails", {}).get("text", ""))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                problems.append(f"log error ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}")
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if not (url == report_url or url.startswith("data:") or url == "about:blank"):
                    problems.append("the page fetched " + url)
        print(f"browser test: {len(sizes['screen'])} charts, page {args.width}×{full_height} px; "
              f"screenshots and PDF in {args.out_dir}")
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)
    for p in problems:
        print("browser test: FAIL " + p, file=sys.stderr)
    if not problems:
        print("browser test: no console error, nothing fetched, every chart has a size on screen and in print")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
