// NDNts publisher: serves --file as /<prefix>/v=<version>/seg=<n> with
// @ndn/segmented-object serveVersioned (2021 conventions: 0x36 version,
// 0x32 segment; FinalBlockId; DigestSha256), answers RDR discovery
// (/<prefix>/32=metadata) with @ndn/rdr serveMetadata (NDNts defaults: the
// metadata packet is unsigned, SignatureType Null), and registers both
// prefixes on icnfwd through @ndn/nfdmgmt. Prints "READY <versioned name>"
// once icnfwd said 200 to both registrations, then serves until killed.
import { readFile } from "node:fs/promises";

import { Name } from "@ndn/packet";
import { Metadata, MetadataKeyword, serveMetadata } from "@ndn/rdr";
import { BufferChunkSource, serveVersioned } from "@ndn/segmented-object";

import { args, connect, fail, prefixReg, uri } from "./lib.mjs";

const opts = args({
  prefix: { type: "string" },
  file: { type: "string" },
  version: { type: "string" },
  "chunk-size": { type: "string", default: "4000" },
  // Serves until killed by the test; at most 2 minutes if the test dies.
  "deadline-ms": { type: "string", default: "120000" },
}, { required: ["prefix", "file"] });
const face = await connect(opts.transport, { addRoutes: [] });
const prefix = new Name(opts.prefix);
const reg = prefixReg(face, [prefix, prefix.append(MetadataKeyword)]);
const body = await readFile(opts.file);
const server = serveVersioned(prefix, new BufferChunkSource(body, { chunkSize: Number(opts["chunk-size"]) }), {
  version: opts.version === undefined ? undefined : Number(opts.version),
});
serveMetadata(new Metadata(server.prefix), { prefix });
try {
  await reg.registered();
} catch (err) {
  fail(`REGISTER-FAILED ${err.message}`);
}
console.log(`READY ${uri(server.prefix)}`);
