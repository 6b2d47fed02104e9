"""A stand-in for a whisper server's OpenAI transcription API (vLLM's /v1/audio/transcriptions),
for the tests: no speech model small enough ships in a package, so it answers each clip it
knows with a fixed text. It is strict where a real server is: the multipart form must hold the
clip as a 16 kHz mono WAV (32-bit float or 16-bit PCM), the served model's name and a language;
the clip is known by the sha256 of its float32 samples (records/audio.json of the librispeech
fixture), so an answer proves the audio arrived sample for sample. Each request is appended to
$TRANSCRIPTION_LOG as a JSON line (the clip's digest and the form's text fields).
usage: transcription_answers.py --port PORT --model NAME --answers FILE (JSON: digest -> text)
"""

import argparse
import email.parser
import email.policy
import hashlib
import json
import os
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def float_samples(wav):
    """The clip's samples as float32 little-endian bytes, or an error."""
    if wav[:4] != b"RIFF" or wav[8:12] != b"WAVE":
        return None, "the file is not a RIFF/WAVE file"
    fmt, data, at = None, None, 12
    while at + 8 <= len(wav):
        chunk, size = wav[at:at + 4], struct.unpack("<I", wav[at + 4:at + 8])[0]
        body = wav[at + 8:at + 8 + size]
        if chunk == b"fmt ":
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif chunk == b"data":
            data = body
        at += 8 + size + (size & 1)
    if fmt is None or data is None:
        return None, "the WAV has no fmt or data chunk"
    tag, channels, rate, _, _, bits = fmt
    if channels != 1 or rate != 16000:
        return None, f"{channels} channel(s) at {rate} Hz: whisper takes 16 kHz mono"
    if tag == 3 and bits == 32:
        return data, None
    if tag == 1 and bits == 16:
        count = len(data) // 2
        return struct.pack(f"<{count}f", *(s / 32768.0 for s in struct.unpack(f"<{count}h", data))), None
    return None, f"format tag {tag} with {bits} bits: not float32 or PCM16"


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, message):
        self.reply(status, {"error": {"message": message, "code": status}})

    def do_GET(self):
        if self.path == "/v1/models":
            self.reply(200, {"object": "list", "data": [{"id": self.server.model, "object": "model"}]})
        elif self.path == "/health":
            self.reply(200, {"status": "ok"})
        else:
            self.error(404, f"no route {self.path}")

    def do_POST(self):
        if self.path != "/v1/audio/transcriptions":
            return self.error(404, f"no route {self.path}")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ctype = self.headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return self.error(400, f"Content-Type {ctype!r}: a transcription is a multipart form")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        fields, wav = {}, None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                wav = part.get_payload(decode=True)
            else:
                fields[name] = part.get_content().strip()
        if wav is None:
            return self.error(400, "the form has no file")
        if fields.get("model") != self.server.model:
            return self.error(404, f"model {fields.get('model')!r} is not served (it is {self.server.model!r})")
        if not fields.get("language"):
            return self.error(400, "the form names no language")
        samples, problem = float_samples(wav)
        if problem:
            return self.error(400, problem)
        digest = hashlib.sha256(samples).hexdigest()
        with self.server.lock, open(self.server.log, "a") as log:
            log.write(json.dumps({"digest": digest, "fields": fields}) + "\n")
        text = self.server.answers.get(digest)
        if text is None:
            return self.error(400, f"unknown clip (sha256 of its float32 samples {digest})")
        # As vLLM answers: json's usage counts the clip's seconds; verbose_json's segments
        # carry the generated tokens (here one per word, four more for whisper's specials).
        seconds = len(samples) // 4 / 16000
        if fields.get("response_format", "json") == "verbose_json":
            tokens = list(range(len(text.split()) + 4))
            self.reply(200, {"task": "transcribe", "language": fields["language"], "duration": seconds,
                             "text": text, "segments": [{"id": 0, "seek": 0, "start": 0.0, "end": seconds,
                                                         "text": text, "tokens": tokens}],
                             "usage": {"type": "duration", "seconds": int(seconds + 0.5)}})
        else:
            self.reply(200, {"text": text, "usage": {"type": "duration", "seconds": int(seconds + 0.5)}})

    def log_message(self, format, *args):
        pass


class Server(ThreadingHTTPServer):
    # A run opens up to `concurrency` connections at once (64 for whisper).
    request_queue_size = 256
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--answers", required=True)
    args = ap.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    server.model = args.model
    server.answers = json.load(open(args.answers))
    server.log = os.environ.get("TRANSCRIPTION_LOG", os.devnull)
    server.lock = threading.Lock()
    print(f"serving {args.model} on 127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
