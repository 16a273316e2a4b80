// NDNts segmented fetch: finds the version of --name (--discovery rdr:
// @ndn/rdr retrieveMetadata; cbp: @ndn/segmented-object discoverVersion,
// a CanBePrefix+MustBeFresh Interest; none: --name is already versioned),
// fetches every segment with @ndn/segmented-object fetch (its TCP-CUBIC
// pipeline, FinalBlockId ends it) and writes the object to --out.
// Prints "OK <versioned name> <bytes> <segments> rxerrors=<n> notoken=<n>/<n>".
import { writeFile } from "node:fs/promises";

import { Name } from "@ndn/packet";
import { retrieveMetadata } from "@ndn/rdr";
import { discoverVersion, fetch } from "@ndn/segmented-object";

import { args, connect, fail, shutdown, uplinkSummary, uri } from "./lib.mjs";

const opts = args({
  name: { type: "string" },
  out: { type: "string" },
  discovery: { type: "string", default: "rdr" },
}, { required: ["name", "out"] });
await connect(opts.transport);
let versioned;
try {
  switch (opts.discovery) {
    case "rdr":
      versioned = (await retrieveMetadata(opts.name)).name;
      break;
    case "cbp":
      versioned = await discoverVersion(new Name(opts.name));
      break;
    case "none":
      versioned = new Name(opts.name);
      break;
    default:
      fail(`unknown --discovery ${opts.discovery}`);
  }
  const result = fetch(versioned, { retxLimit: 10 });
  const body = await result;
  await writeFile(opts.out, body);
  console.log(`OK ${uri(versioned)} ${body.length} ${result.count} ${uplinkSummary()}`);
} catch (err) {
  fail(`${opts.discovery} ${opts.name}: ${err.message}`);
}
shutdown();
