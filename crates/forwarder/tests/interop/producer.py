"""python-ndn producer for the icnfwd interop tests.

Registers --prefix (answers every Interest under it with --content) and,
optionally, --silent (registered, never answered). Prints READY once both
registrations returned True, then serves until killed. Uses
NDN_CLIENT_TRANSPORT to find the forwarder; --legacy uses the old
ndn.app.NDNApp (4-component command Interests) instead of ndn.appv2.
"""
import argparse
import asyncio
import sys

from ndn.encoding import Name
from ndn.security.signer.sha256_digest_signer import DigestSha256Signer


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--content", required=True)
    ap.add_argument("--silent")
    ap.add_argument("--legacy", action="store_true")
    args = ap.parse_args()
    signer = DigestSha256Signer()

    if args.legacy:
        from ndn.app import NDNApp
        from ndn.security import KeychainDigest
        # A digest keychain: no PIB/TPM files in $HOME.
        app = NDNApp(keychain=KeychainDigest())

        def on_interest(name, _param, _app_param):
            app.put_data(name, args.content.encode(), freshness_period=1000)

        async def start():
            ok = await app.register(args.prefix, on_interest)
            ok2 = True
            if args.silent:
                ok2 = await app.register(args.silent, lambda *_: None)
            print("READY" if ok and ok2 else f"REGISTER-FAILED {ok} {ok2}", flush=True)

        app.run_forever(after_start=start())
        return 0

    from ndn.appv2 import NDNApp
    app = NDNApp()

    def on_interest(name, _app_param, reply, _ctx):
        reply(app.make_data(name, args.content.encode(), signer, freshness_period=1000))

    app.attach_handler(args.prefix, on_interest)
    if args.silent:
        app.attach_handler(args.silent, lambda *_: None)

    async def start():
        ok = await app.register(args.prefix)
        ok2 = True
        if args.silent:
            ok2 = await app.register(args.silent)
        print("READY" if ok and ok2 else f"REGISTER-FAILED {ok} {ok2}", flush=True)

    app.run_forever(after_start=start())
    return 0


if __name__ == "__main__":
    sys.exit(main())
