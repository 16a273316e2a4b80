// NDNts 0.0.20250307 declares node ^22.11; on Node 20 the only newer API its
// code paths used here call is Promise.withResolvers (ES2024). Define it
// exactly as the spec does when the runtime lacks it; Node 22+ keeps its own.
if (typeof Promise.withResolvers !== "function") {
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value: function withResolvers() {
      let resolve;
      let reject;
      const promise = new this((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
