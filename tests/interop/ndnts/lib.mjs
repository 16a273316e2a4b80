// Shared by the NDNts interop scripts: argument parsing, connecting the
// default NDNts forwarder to icnfwd, prefix registration with a visible
// outcome, and a hard deadline so that no script outlives its test.
import "./polyfill.mjs";

import { parseArgs } from "node:util";

import { Forwarder } from "@ndn/fw";
import { AltUri } from "@ndn/naming-convention2";
import { enableNfdPrefixReg } from "@ndn/nfdmgmt";
import { Data, Nack, Name } from "@ndn/packet";
import { TcpTransport, UdpTransport, UnixTransport } from "@ndn/node-transport";

/**
 * Parses `process.argv` with `options` plus the common `--transport` and
 * `--deadline-ms` flags, and arms the deadline.
 */
export function args(options, { positionals = false, required = [] } = {}) {
  const { values, positionals: pos } = parseArgs({
    options: {
      transport: { type: "string" },
      "deadline-ms": { type: "string", default: "30000" },
      ...options,
    },
    allowPositionals: positionals,
  });
  if (!values.transport) {
    fail("--transport unix:///path | udp://host:port | tcp://host:port is required");
  }
  for (const r of required) {
    if (values[r] === undefined) {
      fail(`--${r} is required`);
    }
  }
  const deadline = Number(values["deadline-ms"]);
  setTimeout(() => fail(`deadline of ${deadline} ms exceeded`), deadline).unref();
  return { ...values, positionals: pos };
}

/** Prints `ERROR <msg>` and exits 1 (the Rust test shows stderr and stdout). */
export function fail(msg) {
  console.log(`ERROR ${msg}`);
  process.exit(1);
}

/**
 * What the uplink face saw: LP packets NDNts could not decode (`rxErrors`:
 * an unknown critical LP field, a bad TLV), and Data/Nacks that came back
 * without the 6-octet PIT token NDNts put on the Interest (`noToken`; NDNts
 * then falls back to name matching, so this is checked separately).
 */
export const uplink = { rxErrors: 0, rxDataNack: 0, noToken: 0 };

/**
 * Connects the default forwarder to icnfwd at `uri`; `addRoutes` (default
 * `/`) sends every Interest this process expresses to icnfwd.
 */
export async function connect(uri, { addRoutes = ["/"] } = {}) {
  const u = new URL(uri);
  const opts = {
    addRoutes,
    callback(_transport, l3face) {
      l3face.addEventListener("rxerror", ({ detail }) => {
        uplink.rxErrors++;
        // On stdout, so that a long-running producer reports it too.
        console.log(`RXERROR ${detail.message}`);
      });
    },
  };
  let face;
  switch (u.protocol) {
    case "unix:":
      face = await UnixTransport.createFace(opts, u.pathname);
      break;
    case "udp:":
      face = await UdpTransport.createFace(opts, { host: u.hostname, port: Number(u.port) });
      break;
    case "tcp:":
      face = await TcpTransport.createFace(opts, u.hostname, Number(u.port));
      break;
    default:
      throw new Error(`unsupported transport ${uri}`);
  }
  Forwarder.getDefault().addEventListener("pktrx", ({ face: f, packet }) => {
    if (f === face && (packet.l3 instanceof Data || packet.l3 instanceof Nack)) {
      uplink.rxDataNack++;
      // L3Face turns an echoed token back into the number it encoded.
      if (typeof packet.token !== "number") {
        uplink.noToken++;
      }
    }
  });
  return face;
}

/** `rxerrors=<n> notoken=<n>/<n>` for the scripts' last line. */
export function uplinkSummary() {
  return `rxerrors=${uplink.rxErrors} notoken=${uplink.noToken}/${uplink.rxDataNack}`;
}

/**
 * Turns on NDNts' NFD prefix registration (rib/register signed Interests
 * from @ndn/nfdmgmt) on `face`. Returns `registered()`, which resolves once
 * icnfwd answered every `want` prefix with 200 or rejects with the
 * ControlResponse status of the first failure, and `withdrawn()`, the same
 * for the rib/unregister NDNts sends when a producer closes. Retries are
 * off so that a refusal shows up as a failure, not a silent retry loop.
 */
export function prefixReg(face, want) {
  const reg = enableNfdPrefixReg(face, { retry: { retries: 0 } });
  // doAdvertise/doWithdraw are NfdPrefixReg's hooks per prefix: they throw
  // "<code> <text>" unless icnfwd's ControlResponse is 200.
  const watch = (hook, verb) => {
    const pending = new Map(want.map((n) => [Name.from(n).toString(), Promise.withResolvers()]));
    const orig = reg[hook].bind(reg);
    reg[hook] = async (name, state) => {
      const p = pending.get(name.toString());
      try {
        await orig(name, state);
        p?.resolve();
      } catch (err) {
        p?.reject(new Error(`${verb} ${uri(name)}: ${err.message}`));
        throw err;
      }
    };
    return () => Promise.all([...pending.values()].map((p) => p.promise));
  };
  return { registered: watch("doAdvertise", "rib/register"), withdrawn: watch("doWithdraw", "rib/unregister") };
}

/** Closes the default forwarder so the process can exit. */
export function shutdown() {
  Forwarder.getDefault().close();
}

/** A name in the 2021 alternate URI format (`/a/v=1/seg=0`), as icnfwd prints it. */
export function uri(name) {
  return AltUri.ofName(name);
}
