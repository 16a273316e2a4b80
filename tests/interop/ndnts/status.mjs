// NDNts management client: reads icnfwd's status datasets with
// @ndn/nfdmgmt list() (status/general, faces/list, rib/list,
// strategy-choice/list; segmented, versioned, as NFD serves them; with
// --query-scheme also faces/query with a FaceQueryFilter on the URI scheme)
// and prints one line per item:
//   GENERAL <nfdVersion> nPitEntries=<n> nFibEntries=<n>
//   FACE <faceId> <uri> <localUri> scope=<n> persistency=<n>
//   ROUTE <prefix> face=<faceId> origin=<n> cost=<n>
//   STRATEGY <prefix> <strategy>
//   QUERY <faceId> <uri>
import { FaceQuery, FaceStatus, GeneralStatus, RibEntry, StrategyChoice, list } from "@ndn/nfdmgmt";

import { args, connect, fail, shutdown, uri } from "./lib.mjs";

const opts = args({ "query-scheme": { type: "string" } });
await connect(opts.transport);
try {
  // GeneralStatus is a single item, not a list: decode the whole content.
  const [general] = await list(GeneralStatus);
  console.log(`GENERAL ${general.nfdVersion} nPitEntries=${general.nPitEntries} nFibEntries=${general.nFibEntries}`);
  for (const f of await list(FaceStatus)) {
    console.log(`FACE ${f.faceId} ${f.uri} ${f.localUri} scope=${f.faceScope} persistency=${f.facePersistency}`);
  }
  for (const e of await list(RibEntry)) {
    for (const r of e.route) {
      console.log(`ROUTE ${uri(e.name)} face=${r.faceId} origin=${r.origin} cost=${r.cost}`);
    }
  }
  for (const s of await list(StrategyChoice)) {
    console.log(`STRATEGY ${uri(s.name)} ${uri(s.strategy)}`);
  }
  if (opts["query-scheme"]) {
    for (const f of await list(FaceQuery({ uriScheme: opts["query-scheme"] }))) {
      console.log(`QUERY ${f.faceId} ${f.uri}`);
    }
  }
} catch (err) {
  fail(`status: ${err.message}`);
}
shutdown();
