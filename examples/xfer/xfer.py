#!/usr/bin/env python3
"""Side-by-side transfer measurement: icnput -> (icnfwd | relay) -> icncat
over loopback Unix sockets.

Each round runs every target on fresh processes: icnfwd (defaults, CS on),
icnfwd with the Content Store off, and `relay`, a byte pipe between the two
applications (this script in a child process: it answers icnput's
rib/register itself, then copies between the two Unix streams), i.e. the transfer
with no forwarder work at all. For each run it prints Gbit/s (content bits
over icncat's wall time) and the CPU seconds per GB (10^9 content bytes)
of each process during the transfer, from /proc/<pid>/stat (icnput,
icnfwd, relay) and from wait4's rusage (icncat), and icnput's CPU before it
serves (mapping, signing every segment); then the median and min-max over
rounds.

    cargo build --release -p icn-forwarder --bin icnfwd -p icn-consumer --bin icnput --bin icncat
    python3 examples/xfer/xfer.py                       # 1 GB, 3 rounds, all targets
    python3 examples/xfer/xfer.py --size-mb 200 --rounds 5 --targets fwd,relay
    python3 examples/xfer/xfer.py --perf icnfwd         # perf record -g on one process
    PERF_ARGS="--call-graph dwarf -F 999" python3 examples/xfer/xfer.py --perf icncat
    ICNFWD=/other/icnfwd python3 examples/xfer/xfer.py  # another build (ICNPUT, ICNCAT too)
    python3 examples/xfer/xfer.py --compare /old/target/release   # A/B, alternating per round
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cpu_s(pid):
    """utime + stime of a live process, seconds."""
    return stat(pid)[0]


def stat(pid):
    """(utime + stime in seconds, minor page faults) of a live process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK, int(fields[7])


def wait_path(path, proc, timeout_s=30):
    end = time.monotonic() + timeout_s
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > end:
            raise RuntimeError(f"{path} did not appear")
        time.sleep(0.01)


# --- the relay target: minimal TLV helpers ----------------------------------


def read_varnum(b, i):
    x = b[i]
    if x < 253:
        return x, i + 1
    n = {253: 2, 254: 4, 255: 8}[x]
    return int.from_bytes(b[i + 1 : i + 1 + n], "big"), i + 1 + n


def varnum(x):
    if x < 253:
        return bytes([x])
    if x < 1 << 16:
        return b"\xfd" + x.to_bytes(2, "big")
    if x < 1 << 32:
        return b"\xfe" + x.to_bytes(4, "big")
    return b"\xff" + x.to_bytes(8, "big")


def tlv(t, v):
    return varnum(t) + varnum(len(v)) + v


def read_element(sock, buf):
    """One whole TLV element from `sock` (with `buf` holding earlier bytes)."""
    while True:
        if len(buf) >= 2:
            try:
                _, i = read_varnum(buf, 0)
                n, j = read_varnum(buf, i)
                if len(buf) >= j + n:
                    return bytes(buf[: j + n]), buf[j + n :]
            except (IndexError, KeyError):
                pass
        more = sock.recv(65536)
        if not more:
            raise RuntimeError("relay: peer closed during registration")
        buf += more


def control_ok(interest):
    """A Data answering a command Interest with ControlResponse 200."""
    _, i = read_varnum(interest, 0)
    _, i = read_varnum(interest, i)
    _, j = read_varnum(interest, i)  # Name type
    n, k = read_varnum(interest, j)
    name = interest[i : k + n]
    content = tlv(21, tlv(101, tlv(102, b"\xc8") + tlv(103, b"OK")))
    sig_info = tlv(22, tlv(27, b"\x00"))
    signed = name + content + sig_info
    return tlv(6, signed + tlv(23, hashlib.sha256(signed).digest()))


def pipe(a, b):
    try:
        while True:
            data = a.recv(1 << 20)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def relay_serve(path):
    """Accepts the producer (answers its rib/register), then the consumer,
    and copies bytes both ways until either closes."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = path + ".tmp"
    srv.bind(tmp)
    srv.listen(4)
    os.rename(tmp, path)
    prod, _ = srv.accept()
    rest = bytearray()
    cmd, rest = read_element(prod, rest)
    prod.sendall(control_ok(cmd))
    cons, _ = srv.accept()
    if rest:
        cons.sendall(rest)
    for s in (prod, cons):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    t = threading.Thread(target=pipe, args=(prod, cons), daemon=True)
    t.start()
    pipe(cons, prod)
    t.join(5)


# --- runs -------------------------------------------------------------------


def binary(env, name, bin_dir):
    return os.environ.get(env) or os.path.join(bin_dir, name)


def fwd_config(tmp, sock, cs):
    path = os.path.join(tmp, "icnfwd.toml")
    with open(path, "w") as f:
        f.write('log_level = "warn"\n')
        if not cs:
            f.write("[tables]\ncs_max_packets = 0\n")
        f.write(f'[unix]\npath = "{sock}"\n[udp]\nenabled = false\n[tcp]\nenabled = false\n')
    return path


def perf_wrap(cmd, which, name, out_dir, tag):
    if which != name:
        return cmd
    data = os.path.join(out_dir, f"perf-{name}-{tag}.data")
    opts = os.environ.get("PERF_ARGS", "-g").split()
    return ["perf", "record", *opts, "-o", data, "--"] + cmd


def run_one(args, target, tag, inp, tmp, bins):
    sock = os.path.join(tmp, f"{target}.sock")
    out = os.path.join(tmp, "out.bin")
    stats_path = os.path.join(tmp, "stats.json")
    procs = []
    try:
        if target == "relay":
            mid = subprocess.Popen([sys.executable, __file__, "--relay-serve", sock])
        else:
            cfg = fwd_config(tmp, sock, cs=(target == "fwd"))
            cmd = perf_wrap([bins["icnfwd"], "-c", cfg], args.perf, "icnfwd", args.perf_dir, tag)
            mid = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        procs.append(mid)
        wait_path(sock, mid)
        env = dict(os.environ, NDN_CLIENT_TRANSPORT=f"unix://{sock}")
        cmd = perf_wrap(
            [bins["icnput"], "/xfer/file", inp] + args.icnput_args,
            args.perf, "icnput", args.perf_dir, tag,
        )
        put = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        procs.append(put)
        line = put.stderr.readline()
        if not line.startswith("Published"):
            raise RuntimeError(f"icnput did not register: {line!r}")
        # perf's child is the process to account: find it.
        put_pid = child_of(put.pid) if args.perf == "icnput" else put.pid
        mid_pid = child_of(mid.pid) if args.perf == "icnfwd" else mid.pid
        c0 = {"icnput": cpu_s(put_pid), "mid": cpu_s(mid_pid), "faults": stat(mid_pid)[1]}
        cmd = perf_wrap(
            [bins["icncat"], "/xfer/file", "-o", out, "--stats-json", stats_path]
            + args.icncat_args,
            args.perf, "icncat", args.perf_dir, tag,
        )
        t0 = time.monotonic()
        cat = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(cat.pid, 0)
        wall = time.monotonic() - t0
        cat.returncode = os.waitstatus_to_exitcode(status)
        c1 = {"icnput": cpu_s(put_pid), "mid": cpu_s(mid_pid), "faults": stat(mid_pid)[1]}
        if cat.returncode != 0:
            raise RuntimeError(f"icncat exited {cat.returncode}")
        with open(stats_path) as f:
            st = json.load(f)
        size = os.path.getsize(inp)
        if os.path.getsize(out) != size:
            raise RuntimeError("output size differs")
        if args.verify and subprocess.call(["cmp", "-s", inp, out]) != 0:
            raise RuntimeError("output differs")
        gb = size / 1e9
        return {
            "gbps": size * 8 / wall / 1e9,
            "icnput": (c1["icnput"] - c0["icnput"]) / gb,
            "publish": c0["icnput"] / gb,
            "mid": (c1["mid"] - c0["mid"]) / gb,
            "icncat": (ru.ru_utime + ru.ru_stime) / gb,
            "retx": st.get("retransmissions", 0),
            "mid_faults_per_mb": (c1["faults"] - c0["faults"]) / (size / 1e6),
        }
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGINT if args.perf else signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for p in (sock, out, stats_path):
            if os.path.exists(p):
                os.unlink(p)


def child_of(pid):
    """The single child of `pid` (the program perf runs), waiting for it."""
    for _ in range(500):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    raise RuntimeError(f"no child of {pid}")


def fmt(xs, digits=2):
    med = statistics.median(xs)
    return f"{med:.{digits}f} ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--relay-serve", help=argparse.SUPPRESS)
    ap.add_argument("--size-mb", type=int, default=1000, help="content size, 10^6 bytes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--targets", default="fwd,fwd-nocs,relay",
                    help="fwd (icnfwd), fwd-nocs (CS off), relay (no forwarder)")
    ap.add_argument("--bin-dir", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release"))
    ap.add_argument("--input", help="file to publish [default: random bytes in a temp dir]")
    ap.add_argument("--verify", action="store_true", help="cmp the output with the input")
    ap.add_argument("--perf", choices=["icnfwd", "icnput", "icncat"],
                    help="run this process under perf record -g")
    ap.add_argument("--perf-dir", default=".", help="where perf-<proc>-<run>.data go")
    ap.add_argument("--icncat-args", default="", help="extra icncat arguments, one string")
    ap.add_argument("--icnput-args", default="", help="extra icnput arguments, one string")
    ap.add_argument("--compare", metavar="BIN_DIR",
                    help="also run the binaries in BIN_DIR (before), alternating with "
                         "--bin-dir (after) in every round")
    ap.add_argument("--json", help="write every run as JSON here")
    args = ap.parse_args()
    if args.relay_serve:
        relay_serve(args.relay_serve)
        return
    args.icncat_args = args.icncat_args.split()
    args.icnput_args = args.icnput_args.split()
    bins = {
        "icnfwd": binary("ICNFWD", "icnfwd", args.bin_dir),
        "icnput": binary("ICNPUT", "icnput", args.bin_dir),
        "icncat": binary("ICNCAT", "icncat", args.bin_dir),
    }
    builds = [("", bins)]
    if args.compare:
        old = {k: os.path.join(args.compare, k) for k in bins}
        builds = [("before ", old), ("after ", bins)]
    targets = [(b, t, bb) for b, bb in builds for t in args.targets.split(",")]
    tmp = tempfile.mkdtemp(prefix="xfer-")
    try:
        inp = args.input
        if not inp:
            inp = os.path.join(tmp, "in.bin")
            with open(inp, "wb") as f:
                left = args.size_mb * 1_000_000
                while left:
                    n = min(left, 1 << 24)
                    f.write(os.urandom(n))
                    left -= n
        runs = {b + t: [] for b, t, _ in targets}
        print(f"{os.path.getsize(inp) / 1e6:.0f} MB, load average "
              f"{os.getloadavg()[0]:.1f}; per run: Gbit/s, CPU s/GB icnput / mid / icncat")
        for r in range(args.rounds):
            for b, t, bb in targets:
                res = run_one(args, t, f"{b.strip()}{t}-{r}", inp, tmp, bb)
                runs[b + t].append(res)
                print(f"round {r} {b + t:16} {res['gbps']:6.2f} Gbit/s  "
                      f"{res['icnput']:.2f} / {res['mid']:.2f} / {res['icncat']:.2f} s/GB  "
                      f"(icnput before serving {res['publish']:.2f})  "
                      f"retx {res['retx']}  mid faults/MB {res['mid_faults_per_mb']:.0f}  load {os.getloadavg()[0]:.1f}", flush=True)
        print()
        print("| target | Gbit/s | icnput s/GB | icnfwd (relay) s/GB | icncat s/GB | sum s/GB "
              "| icnput before serving s/GB |")
        print("|---|---|---|---|---|---|---|")
        for t, xs in runs.items():
            total = [x["icnput"] + x["mid"] + x["icncat"] for x in xs]
            print(f"| {t} | {fmt([x['gbps'] for x in xs])} | {fmt([x['icnput'] for x in xs])} "
                  f"| {fmt([x['mid'] for x in xs])} | {fmt([x['icncat'] for x in xs])} "
                  f"| {fmt(total)} | {fmt([x['publish'] for x in xs])} |")
        print(f"median (min-max) over {args.rounds} rounds; load average now "
              f"{os.getloadavg()[0]:.1f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(runs, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
