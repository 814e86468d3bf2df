# A stand-in for a dynolog daemon, for the test of attnscope's daemon route: it serves the job's polls
# on the `dynolog` endpoint (the path DIR/dynolog, as a job with KINETO_IPC_SOCKET_DIR=DIR polls it)
# and takes on-demand requests on a TCP port the way dynolog's RPC server does (4-byte native-endian
# length + JSON; the reply alike). Each request is appended to LOG (one JSON line) and its config is
# handed to the matched processes at their next poll; the reply lists them.
#   python3 fake_dynolog.py SOCKET_DIR PORT_FILE LOG
import json
import os
import select
import socket
import struct
import sys

sock_dir, port_file, log_path = sys.argv[1:4]
path = os.path.join(sock_dir, "dynolog")
if os.path.exists(path):
    os.unlink(path)
ipc = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
ipc.bind(path)
rpc = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
rpc.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
rpc.bind(("127.0.0.1", 0))
rpc.listen(4)
with open(port_file + ".tmp", "w") as f:
    f.write(str(rpc.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)

known = set()   # pids that polled
pending = {}    # pid -> config


def read_exact(c, n):
    b = b""
    while len(b) < n:
        chunk = c.recv(n - len(b))
        if not chunk:
            raise EOFError
        b += chunk
    return b


while True:
    ready, _, _ = select.select([ipc, rpc], [], [], 1.0)
    if ipc in ready:
        data, addr = ipc.recvfrom(65536)
        size = struct.unpack("=Q", data[:8])[0]
        kind = data[8:40].split(b"\0")[0]
        body = data[40:40 + size]
        reply = b""
        if kind == b"req":
            ctype, n, job = struct.unpack("=iiq", body[:16])
            pid = struct.unpack("=i", body[16:20])[0]
            known.add(pid)
            if ctype & 2 and pid in pending:
                reply = pending.pop(pid).encode()
        ipc.sendto(struct.pack("=Q", len(reply)) + b"req".ljust(32, b"\0") + reply, addr)
    if rpc in ready:
        c, _ = rpc.accept()
        try:
            n = struct.unpack("=i", read_exact(c, 4))[0]
            req = json.loads(read_exact(c, n))
            with open(log_path, "a") as f:
                f.write(json.dumps(req) + "\n")
            matched = [p for p in req["pids"] if p in known]
            for p in matched:
                pending[p] = req["config"]
            resp = json.dumps({"processesMatched": matched, "activityProfilersTriggered": matched,
                               "eventProfilersTriggered": [], "activityProfilersBusy": 0,
                               "eventProfilersBusy": 0}).encode()
            c.sendall(struct.pack("=i", len(resp)) + resp)
        except (EOFError, ValueError, KeyError):
            pass
        c.close()
