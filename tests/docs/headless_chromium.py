"""Opens a page in headless Chromium (Debian's `chromium`) and reports what a person would see.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
ended by a NUL byte, the browser reading fd 3 and writing fd 4), so nothing listens on a port.
It runs with a new empty profile directory, no sandbox (tests run as root), no GPU and no
background networking, and is stopped by its PID when done.

    with Page.open("file:///.../report.html", width=1000) as page:
        page.errors        # console errors, uncaught exceptions, failed loads
        page.evaluate(js)  # a JSON-able value
        png = page.screenshot()  # the whole page
"""
import base64
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]
TIMEOUT = 60


def chromium_binary():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError("chromium is not installed (scripts/install-deps.sh installs Debian's)")


class Page:
    def __init__(self, url, width, height):
        self.profile = tempfile.mkdtemp(prefix="shardkit-chromium-")
        # fd 3 is the browser's input (our stdin pipe), fd 4 its output (our stdout pipe).
        script = 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null'
        cmd = ["bash", "-c", script, "chromium", chromium_binary(), *FLAGS,
               f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.errors = []
        self.width = width
        target = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.page = self.call("Target.attachToTarget", targetId=target["targetId"],
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", on_page=True)
        self.call("Page.navigate", on_page=True, url=url)
        self.wait_event("Page.loadEventFired")

    @classmethod
    def open(cls, url, width=1000, height=800):
        return cls(url, width, height)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method, on_page, params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if on_page:
            message["sessionId"] = self.page
        self.proc.stdin.write(json.dumps(message).encode() + b"\0")
        self.proc.stdin.flush()
        return self.next_id

    def receive(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        message = json.loads(raw)
        if "method" in message:
            self.note(message)
        return message

    def note(self, event):
        """Keeps every event; records the ones that mean the page did not work."""
        self.events.append(event)
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append("exception: " + params["exceptionDetails"].get("text", ""))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console.error: " + json.dumps(params.get("args")))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append("log: " + params["entry"].get("text", ""))

    def call(self, method, on_page=False, **params):
        wanted = self.send(method, on_page, params)
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def wait_event(self, method):
        if any(e["method"] == method for e in self.events):
            return
        deadline = time.monotonic() + TIMEOUT
        while self.receive(deadline).get("method") != method:
            pass

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", on_page=True, expression=expression,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self):
        """PNG bytes of the whole page, at one device pixel per CSS pixel."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.call("Emulation.setDeviceMetricsOverride", on_page=True, width=self.width,
                  height=height, deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", on_page=True, format="png")["data"]
        return base64.b64decode(data)


def decode_png(png):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG, non-interlaced."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def region_colors(rows, box):
    """Pixels by colour inside box = {x, y, width, height} (CSS pixels = image pixels)."""
    counts = {}
    x0, y0 = int(box["x"]), int(box["y"])
    for row in rows[y0:y0 + int(box["height"])]:
        for pixel in row[x0:x0 + int(box["width"])]:
            counts[pixel] = counts.get(pixel, 0) + 1
    return counts
