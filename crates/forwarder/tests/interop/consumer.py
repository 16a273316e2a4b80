"""python-ndn consumer for the icnfwd interop tests.

Expresses one Interest per NAME argument and prints one line each:
  DATA <name> <content>  |  NACK <name> <reason>  |  TIMEOUT <name>
"""
import argparse
import sys

from ndn.appv2 import NDNApp, pass_all
from ndn.encoding import Name
from ndn.types import InterestNack, InterestTimeout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--lifetime", type=int, default=2000)
    args = ap.parse_args()
    app = NDNApp()

    async def run():
        try:
            for n in args.names:
                try:
                    name, content, _ctx = await app.express(
                        n, pass_all, must_be_fresh=True, can_be_prefix=False, lifetime=args.lifetime)
                    print(f"DATA {Name.to_str(name)} {bytes(content).decode()}", flush=True)
                except InterestNack as e:
                    print(f"NACK {n} {e.reason}", flush=True)
                except InterestTimeout:
                    print(f"TIMEOUT {n}", flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
