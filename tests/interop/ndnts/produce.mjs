// NDNts producer: registers --prefix (and --silent, never answered) on
// icnfwd with @ndn/nfdmgmt rib/register, answers every Interest under
// --prefix with --content (DigestSha256-signed, FreshnessPeriod 1 s).
// Prints "READY <transport-kind> <prefix-name>" once icnfwd said 200 to
// every registration, then serves until killed, or with --withdraw-after-ms
// closes its producers after that long (NDNts then sends rib/unregister),
// prints "WITHDRAWN <prefix-name>" once icnfwd said 200, and exits.
import { produce } from "@ndn/endpoint";
import { Data, digestSigning } from "@ndn/packet";

import { args, connect, fail, prefixReg, shutdown } from "./lib.mjs";

const opts = args({
  prefix: { type: "string" },
  content: { type: "string" },
  silent: { type: "string" },
  "withdraw-after-ms": { type: "string" },
  // Serves until killed by the test; at most 2 minutes if the test dies.
  "deadline-ms": { type: "string", default: "120000" },
}, { required: ["prefix", "content"] });
const face = await connect(opts.transport, { addRoutes: [] });
const want = [opts.prefix, ...(opts.silent ? [opts.silent] : [])];
const reg = prefixReg(face, want);
const body = new TextEncoder().encode(opts.content);
const producers = [];
producers.push(produce(opts.prefix, async (interest) => new Data(interest.name, Data.FreshnessPeriod(1000), body), {
  dataSigner: digestSigning,
}));
if (opts.silent) {
  producers.push(produce(opts.silent, async () => undefined));
}
try {
  await reg.registered();
} catch (err) {
  fail(`REGISTER-FAILED ${err.message}`);
}
console.log(`READY ${new URL(opts.transport).protocol.slice(0, -1)} ${opts.prefix}`);
if (opts["withdraw-after-ms"] !== undefined) {
  await new Promise((r) => setTimeout(r, Number(opts["withdraw-after-ms"])));
  for (const p of producers) {
    p.close();
  }
  try {
    await reg.withdrawn();
  } catch (err) {
    fail(`WITHDRAW-FAILED ${err.message}`);
  }
  console.log(`WITHDRAWN ${opts.prefix}`);
  shutdown();
}
