"""A stand-in for APNs, FCM HTTP v1 and Tencent Cloud Chat for Scripts/sender-examples.sh:
answers like each service does on success, over plain HTTP/1.1 on localhost.

    python3 mock_providers.py PORT
"""
import json, sys, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        json.loads(self.rfile.read(length) or b"{}")  # every example sends a JSON body
        if self.path.startswith("/3/device/"):
            self.answer(200, b"", {"apns-id": str(uuid.uuid4()).upper()})
        elif self.path.startswith("/v1/projects/") and self.path.endswith("/messages:send"):
            self.answer(200, json.dumps({"name": self.path[4:-14] + "/messages/0:1795252443412%31bd1c9631bd1c96"}).encode())
        elif self.path.startswith("/v4/openim/sendmsg"):
            self.answer(200, json.dumps({"ActionStatus": "OK", "ErrorInfo": "", "ErrorCode": 0,
                                         "MsgTime": 1795252443, "MsgKey": "1795252443_42_1"}).encode())
        else:
            self.answer(404, b'{"error":"unknown path"}')

    def answer(self, status, body, headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
