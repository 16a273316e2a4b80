// NDNts producer: registers --prefix (and --silent, never answered) on
// icnfwd with @ndn/nfdmgmt rib/register, answers every Interest under
// --prefix with --content (DigestSha256-signed, FreshnessPeriod 1 s).
// Prints "READY <transport-kind> <prefix-name>" once icnfwd said 200 to
// every registration, then serves until killed.
import { produce } from "@ndn/endpoint";
import { Data, digestSigning } from "@ndn/packet";

import { args, connect, fail, prefixReg } from "./lib.mjs";

const opts = args({
  prefix: { type: "string" },
  content: { type: "string" },
  silent: { type: "string" },
  // The producer runs until killed: no deadline unless asked.
  "deadline-ms": { type: "string", default: "600000" },
}, { required: ["prefix", "content"] });
const face = await connect(opts.transport, { addRoutes: [] });
const want = [opts.prefix, ...(opts.silent ? [opts.silent] : [])];
const registered = prefixReg(face, want);
const body = new TextEncoder().encode(opts.content);
produce(opts.prefix, async (interest) => new Data(interest.name, Data.FreshnessPeriod(1000), body), {
  dataSigner: digestSigning,
});
if (opts.silent) {
  produce(opts.silent, async () => undefined);
}
try {
  await registered();
} catch (err) {
  fail(`REGISTER-FAILED ${err.message}`);
}
console.log(`READY ${new URL(opts.transport).protocol.slice(0, -1)} ${opts.prefix}`);
