// NDNts consumer: one Interest (MustBeFresh) per positional name, in order;
// prints one line each:
//   DATA <name> <content>  |  NACK <name> <reason code>  |  TIMEOUT <name>
// then "END rxerrors=<n> notoken=<n>/<n>" (see lib.mjs `uplink`).
// NDNts' own forwarder drops Nacks (the consumer would see a timeout), so
// the Nack is read from the uplink face's packet events, with its reason.
import { consume } from "@ndn/endpoint";
import { Forwarder } from "@ndn/fw";
import { Interest, Nack } from "@ndn/packet";

import { args, connect, shutdown, uplinkSummary, uri } from "./lib.mjs";

const opts = args({ "lifetime-ms": { type: "string", default: "2000" } }, { positionals: true });
const fw = Forwarder.getDefault();
const face = await connect(opts.transport);
let onNack = () => undefined;
fw.addEventListener("pktrx", ({ face: f, packet }) => {
  if (f === face && packet.l3 instanceof Nack) {
    onNack(packet.l3);
  }
});
for (const n of opts.positionals) {
  const interest = new Interest(n, Interest.MustBeFresh, Interest.Lifetime(Number(opts["lifetime-ms"])));
  const abort = new AbortController();
  let nack;
  onNack = (pkt) => {
    if (pkt.interest.name.equals(interest.name)) {
      nack = pkt;
      abort.abort();
    }
  };
  try {
    const data = await consume(interest, { signal: abort.signal, retx: 0 });
    console.log(`DATA ${uri(data.name)} ${new TextDecoder().decode(data.content)}`);
  } catch (err) {
    if (nack) {
      console.log(`NACK ${n} ${nack.reason}`);
    } else if (/expire/.test(err.message)) {
      console.log(`TIMEOUT ${n}`);
    } else {
      console.log(`ERROR ${n} ${err.message}`);
    }
  }
}
console.log(`END ${uplinkSummary()}`);
shutdown();
