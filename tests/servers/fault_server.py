"""An HTTP server on 127.0.0.1 that the remote-dataset tests start and stop by PID. It serves
files from --root (byte ranges as nginx does) or forwards to --upstream (a proxy in front of
s3rver, which knows one access key and checks no SigV4 signature), and misbehaves on purpose
where a --rule says so. With --sigv4 every request must carry a valid AWS SigV4 signature
(sigv4.py) by one of the given keys, else 403 as S3 answers.

Rules (JSON, first match on the request path wins):
  {"path": RE, "fail": N, "status": 503}  the first N matching requests get `status`
  {"path": RE, "stall": true}             no answer at all: the request hangs until the client
                                          gives up (or the server is stopped)
  {"path": RE, "redirect": TEMPLATE, "status": 302}
                                          Location is re.sub(RE, TEMPLATE, path)
  {"path": RE, "whole": true}             Range ignored: 200 with the whole file
  {"path": RE, "no_length": true}         200 with the whole file, no Content-Length (the
                                          end is the connection's close)
  {"path": RE, "encoding": "gzip"}        the answer (whole file or range) gzip-compressed, with
                                          Content-Encoding: gzip, as S3 serves an object stored
                                          with that metadata; any other name is sent as the
                                          header alone, the bytes as stored
  {"path": RE, "huge_header": BYTES}      the answer with one more header line of BYTES bytes
  {"path": RE, "many_headers": N}         the answer with N more header lines (about 40 bytes
                                          each)
  {"path": RE, "extra": N, "extra_delay_ms": MS}
                                          the answer, then N more bytes past its Content-Length
                                          (an HTML fragment), MS ms later (default 0: at once)
  {"path": RE, "shift_range": N}          a Range answered with the bytes N earlier (from 0 at
                                          the least), the Content-Range saying so, as a cache that
                                          mixes up ranges does
  {"path": RE, "short_length": N}         the answer with a Content-Length N bytes shorter than
                                          the body it sends
  {"path": RE, "cut_headers": true}       the status line and half a header, then the
                                          connection closed
  {"path": RE, "no_headers_end": true}    the status line and the headers without the blank line
                                          that ends them, then the connection closed
  {"path": RE, "bad_chunked": true}       Transfer-Encoding: chunked with a chunk size that is
                                          not hexadecimal
  {"path": RE, "not_http": true}          a line that is not an HTTP status line, then the
                                          connection closed
Any rule but "fail" applies to every matching request, or with "times": N to the first N.

Each request is logged when it arrives, one line, tab-separated: monotonic seconds, method,
path, Range or -, the rule's action or "serve", and the names of the credential headers it
carried (authorization, x-amz-*) or -."""
import argparse
import datetime
import gzip
import http.client
import http.server
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sigv4  # noqa: E402

ACTIONS = ("fail", "stall", "redirect", "whole", "no_length", "encoding", "huge_header",
           "many_headers", "extra", "shift_range", "short_length", "cut_headers", "no_headers_end",
           "bad_chunked", "not_http")
# Actions that answer with a broken response of their own rather than the file's.
BROKEN = ("cut_headers", "no_headers_end", "bad_chunked", "not_http")
CREDENTIAL_HEADERS = ("authorization", "x-amz-security-token", "x-amz-date", "x-amz-content-sha256")


class Rule:
    def __init__(self, spec):
        self.pattern = re.compile(spec["path"])
        self.spec = spec
        self.left = spec.get("fail", spec.get("times"))
        self.lock = threading.Lock()

    def action(self, path):
        """The action for this request, or None when the rule does not apply (any more)."""
        if not self.pattern.search(path):
            return None
        if self.left is not None:
            with self.lock:
                if self.left <= 0:
                    return None
                self.left -= 1
        for name in ACTIONS:
            if name in self.spec:
                return name
        return None


def padding_headers(spec):
    """The header lines a huge_header or many_headers rule adds."""
    if spec.get("huge_header"):
        yield "X-Padding", "p" * spec["huge_header"]
    for i in range(spec.get("many_headers", 0)):
        yield f"X-Padding-{i:06d}", "header line of a misconfigured server"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault_server"
    # Headers and body go out in separate writes: without this, Nagle's algorithm and the
    # client's delayed ACK hold each response back 40 ms.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def handle_any(self):
        cfg = self.server.cfg
        path = urllib.parse.urlsplit(self.path).path
        headers = {k.lower(): v for k, v in self.headers.items()}
        body = self.rfile.read(int(headers.get("content-length", 0) or 0)) if self.command == "PUT" else b""
        rule, action = None, "serve"
        for r in cfg.rules:
            a = r.action(path)
            if a:
                rule, action = r, a
                break
        carried = ",".join(h for h in CREDENTIAL_HEADERS if h in headers) or "-"
        fields = [f"{time.monotonic():.6f}", self.command, path, headers.get("range", "-"), action, carried]
        cfg.log("\t".join(fields))
        if cfg.credentials and not self.signed(headers, body):
            return
        if action == "stall":
            while True:
                time.sleep(3600)
        if action == "fail":
            return self.answer(rule.spec.get("status", 503), b"<Error><Code>SlowDown</Code></Error>")
        if action == "redirect":
            location = rule.pattern.sub(rule.spec["redirect"], path, count=1)
            return self.answer(rule.spec.get("status", 302), b"", {"Location": location})
        if action in BROKEN:
            return self.send_broken(action)
        if cfg.upstream:
            return self.forward(headers, body)
        self.serve_file(path, headers, action, rule.spec if rule else {})

    def signed(self, headers, body):
        try:
            sigv4.verify(self.command, self.path, headers, body, self.server.cfg.credentials,
                         self.server.cfg.region, now=datetime.datetime.now(datetime.timezone.utc))
            return True
        except sigv4.Refused as e:
            print(f"refused {self.command} {self.path}: {e}", file=sys.stderr, flush=True)
            self.answer(403, f"<Error><Code>{e.code}</Code><Message>{e.message}</Message></Error>".encode())
            return False

    def answer(self, status, body, extra=None, spec=None):
        spec = spec or {}
        self.send_response(status)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        for k, v in padding_headers(spec):
            self.send_header(k, v)
        self.send_header("Content-Length", str(max(0, len(body) - spec.get("short_length", 0))))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        if spec.get("extra"):
            self.send_extra(spec["extra"], spec.get("extra_delay_ms", 0))

    def send_extra(self, n, delay_ms):
        self.wfile.flush()
        time.sleep(delay_ms / 1000)
        self.wfile.write((b"<html><body>trailing</body></html>\n" * (n // 35 + 1))[:n])

    def send_broken(self, action):
        """Raw bytes that are no well-formed HTTP/1.1 response; the connection then closes
        (but for bad_chunked, whose end the client cannot find)."""
        self.close_connection = True
        if action == "cut_headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-str")
        elif action == "no_headers_end":
            self.wfile.write(b"HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\n")
        elif action == "bad_chunked":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"zz\r\nnot a chunk size\r\n")
        elif action == "not_http":
            self.wfile.write(b"<html><body>Service Unavailable</body></html>\r\n")
        self.wfile.flush()

    def serve_file(self, path, headers, action, spec):
        root = self.server.cfg.root
        file = os.path.realpath(os.path.join(root, urllib.parse.unquote(path).lstrip("/")))
        if not file.startswith(root + os.sep) or not os.path.isfile(file):
            return self.answer(404, b"<Error><Code>NoSuchKey</Code></Error>")
        with open(file, "rb") as f:
            data = f.read()
        if action == "no_length":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            if self.command != "HEAD":
                self.wfile.write(data)
            return
        encoding = spec.get("encoding")
        encoded = {"Content-Encoding": encoding} if action == "encoding" else {}
        body = gzip.compress if encoding == "gzip" else bytes
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", headers.get("range", "")) if action != "whole" else None
        if not m:
            return self.answer(200, body(data), encoded, spec)
        first = int(m.group(1))
        last = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        if first > last:
            return self.answer(416, b"", {"Content-Range": f"bytes */{len(data)}"})
        if action == "shift_range":
            shift = min(first, spec["shift_range"])
            first, last = first - shift, last - shift
        self.answer(206, body(data[first:last + 1]),
                    {"Content-Range": f"bytes {first}-{last}/{len(data)}", **encoded}, spec)

    def forward(self, headers, body):
        # s3rver looks the access key up (it checks no SigV4 signature): the request verified
        # here goes on as the one key it knows.
        sent = {k: v for k, v in self.headers.items()}
        for k in sent:
            if k.lower() == "authorization":
                sent[k] = re.sub(r"Credential=[^/]+/", f"Credential={self.server.cfg.upstream_key}/", sent[k])
        conn = http.client.HTTPConnection("127.0.0.1", self.server.cfg.upstream, timeout=60)
        try:
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.request(self.command, self.path, body=body if self.command == "PUT" else None,
                         headers=sent)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        length = resp.getheader("Content-Length", "0") if self.command == "HEAD" else len(data)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


class Config:
    def __init__(self, args):
        self.root = os.path.realpath(args.root) if args.root else None
        self.upstream = args.upstream
        self.upstream_key = args.upstream_key
        self.rules = [Rule(json.loads(r)) for r in args.rule]
        self.region = args.region
        self.credentials = {}
        for spec in args.sigv4:
            key, secret, *token = spec.split(":", 2)
            self.credentials[key] = (secret, token[0] if token else None)
        self._log = open(args.log, "a", buffering=1)
        self._lock = threading.Lock()

    def log(self, line):
        with self._lock:
            self._log.write(line + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--root")
    p.add_argument("--upstream", type=int)
    p.add_argument("--upstream-key", default="S3RVER", help="the access key the upstream knows")
    p.add_argument("--rule", action="append", default=[])
    p.add_argument("--sigv4", action="append", default=[], help="ACCESS_KEY:SECRET[:SESSION_TOKEN]")
    p.add_argument("--region", default="us-east-1")
    args = p.parse_args()
    if bool(args.root) == bool(args.upstream):
        p.error("give --root or --upstream")
    sigv4.self_test()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.cfg = Config(args)
    server.serve_forever()


if __name__ == "__main__":
    main()
