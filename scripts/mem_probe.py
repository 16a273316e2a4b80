#!/usr/bin/env python3
"""Issue-17 memory probes against a running icnfwd (loopback only).

  mem_probe.py pit   PID PORT ROUNDS  -- ROUNDS x (31 junk 8800-octet datagrams,
                                         then one Interest /silent/<n>, lifetime 120 s)
  mem_probe.py frags PID PORT SECONDS -- NDNLPv2 fragments 0..198 of 200-fragment
                                         packets (never completed) from 2 source
                                         ports for SECONDS
  mem_probe.py drain PID PORT COUNT   -- COUNT unique Interests (lifetime 2 s) from
                                         4 source ports as fast as possible, then
                                         VmRSS every 5 s for 60 s (memory return)
  mem_probe.py rss   PID              -- print VmRSS (kB)

Prints VmRSS before and after. The forwarder needs a route /silent to a
face that never answers (e.g. a [[face]] to an unused loopback port).
"""
import socket
import struct
import sys
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def tlv(t, v):
    def num(n):
        if n < 253:
            return bytes([n])
        if n < 65536:
            return b"\xfd" + struct.pack(">H", n)
        return b"\xfe" + struct.pack(">I", n)
    return num(t) + num(len(v)) + v


def interest(name, nonce, lifetime_ms=120000):
    comps = b"".join(tlv(8, c.encode()) for c in name.strip("/").split("/"))
    return tlv(5, tlv(7, comps) + tlv(10, struct.pack(">I", nonce)) + tlv(12, struct.pack(">I", lifetime_ms)))


def lp_fragment(seq, index, count, payload):
    return tlv(100, tlv(81, struct.pack(">Q", seq + index)) + tlv(82, bytes([index])) + tlv(83, bytes([count])) + tlv(80, payload))


def main():
    mode, pid = sys.argv[1], int(sys.argv[2])
    print("rss_before_kb", rss_kb(pid), flush=True)
    if mode == "rss":
        return
    port, n = int(sys.argv[3]), int(sys.argv[4])
    dst = ("127.0.0.1", port)
    if mode == "pit":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        junk = b"\x05" * 8800
        for i in range(n):
            for _ in range(31):
                s.sendto(junk, dst)
            s.sendto(interest(f"/silent/{i}", i + 1), dst)
            if i % 50 == 0:
                time.sleep(0.002)
    elif mode == "drain":
        socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
        peak = 0
        for i in range(n):
            socks[i % 4].sendto(interest(f"/silent/{i}", i + 1, 2000), dst)
            if i % 2000 == 0:
                time.sleep(0.005)
                peak = max(peak, rss_kb(pid))
        print("rss_peak_kb", max(peak, rss_kb(pid)), flush=True)
        for t in range(0, 65, 5):
            print(f"rss_t+{t}s_kb", rss_kb(pid), flush=True)
            time.sleep(5)
        return
    elif mode == "frags":
        socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
        piece = b"\x00" * 8000
        end = time.time() + n
        seq = 0
        while time.time() < end:
            # fragments 0..198 of 200-fragment packets that never complete
            for index in range(199):
                for s in socks:
                    s.sendto(lp_fragment(seq * 256, index, 200, piece), dst)
            seq += 1
        print("rss_during_kb", rss_kb(pid), flush=True)
    time.sleep(1.0)
    print("rss_after_kb", rss_kb(pid), flush=True)


if __name__ == "__main__":
    main()
