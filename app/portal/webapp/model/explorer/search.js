sap.ui.define([
  "sap/ui/model/Filter",
  "sap/ui/model/FilterOperator"
], function (Filter, FilterOperator) {
  "use strict";

  /**
   * The explorer's search: what a query looks like (its shape), and where it leads. A height opens
   * the chain-A block at that height; an address, stake address or pool id its page; a document id
   * its document; a 64-hex hash is looked up among the indexed transactions and blocks of both
   * chains and the caller's chain-B documents, then read from chain A's upstream (transaction, then
   * block). Each look-up is an OData read of the component's models (listed under Requests).
   */
  var SHAPES = [
    { kind: "height", pattern: /^\d{1,10}$/ },
    { kind: "hash", pattern: /^[0-9a-fA-F]{64}$/ },
    { kind: "address", pattern: /^addr(_test)?1[0-9a-z]{20,}$/ },
    { kind: "stake", pattern: /^stake(_test)?1[0-9a-z]{20,}$/ },
    { kind: "pool", pattern: /^pool1[0-9a-z]{20,}$/ },
    { kind: "document", pattern: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/ }
  ];

  function shape(query) {
    var text = String(query || "").trim();
    for (var i = 0; i < SHAPES.length; i++) {
      if (SHAPES[i].pattern.test(text)) return { kind: SHAPES[i].kind, value: SHAPES[i].kind === "hash" ? text.toLowerCase() : text };
    }
    return { kind: "unknown", value: text };
  }

  /** Whether a filtered collection holds an entity (one row, its key only). */
  function exists(model, path, property, value, select) {
    var binding = model.bindList(path, null, null, [new Filter(property, FilterOperator.EQ, value)], { $select: select });
    return binding.requestContexts(0, 1).then(function (contexts) {
      var found = contexts[0] && contexts[0].getObject();
      binding.destroy();
      return found;
    }, function () {
      binding.destroy();
      return undefined;
    });
  }

  /** Reads one entity by its key path; undefined when there is none. */
  function read(model, path, select) {
    var binding = model.bindContext(path, null, { $select: select });
    return binding.requestObject().then(function (value) {
      binding.destroy();
      return value;
    }, function () {
      binding.destroy();
      return undefined;
    });
  }

  /** Where a 64-hex hash leads: { route, args } or undefined. */
  function resolveHash(models, hash) {
    return Promise.all([
      exists(models.chainA, "/Transactions", "hash", hash, "hash"),
      exists(models.chainA, "/Blocks", "hash", hash, "hash"),
      exists(models.chainB, "/Transactions", "hash", hash, "hash"),
      exists(models.chainB, "/Blocks", "hash", hash, "hash"),
      exists(models.chainB, "/Documents", "payloadHash", hash, "ID")
    ]).then(function (found) {
      if (found[0]) return { route: "explorer-transaction", args: { chain: "chain-a", id: hash } };
      if (found[1]) return { route: "explorer-block", args: { chain: "chain-a", id: hash } };
      if (found[2]) return { route: "explorer-transaction", args: { chain: "chain-b", id: hash } };
      if (found[3]) return { route: "explorer-block", args: { chain: "chain-b", id: hash } };
      if (found[4]) return { route: "explorer-document", args: { id: found[4].ID } };
      // Not indexed here: chain A's upstream may know it (an older transaction or block).
      return read(models.chainA, "/Transactions('" + hash + "')", "hash").then(function (transaction) {
        if (transaction) return { route: "explorer-transaction", args: { chain: "chain-a", id: hash } };
        return read(models.chainA, "/Blocks('" + hash + "')", "hash").then(function (block) {
          return block ? { route: "explorer-block", args: { chain: "chain-a", id: hash } } : undefined;
        });
      });
    });
  }

  /**
   * Where `query` leads: a promise of { route, args } for the router, or undefined when nothing
   * matches. `models` holds the component's chainA and chainB models.
   */
  function resolve(models, query) {
    var found = shape(query);
    switch (found.kind) {
      case "height": return Promise.resolve({ route: "explorer-block", args: { chain: "chain-a", id: found.value } });
      case "address":
      case "stake": return Promise.resolve({ route: "explorer-address", args: { address: found.value } });
      case "pool": return Promise.resolve({ route: "explorer-pool", args: { poolId: found.value } });
      case "document": return Promise.resolve({ route: "explorer-document", args: { id: found.value.toLowerCase() } });
      case "hash": return resolveHash(models, found.value);
      default: return Promise.resolve(undefined);
    }
  }

  return { shape: shape, resolve: resolve };
});
