sap.ui.define([], function () {
  "use strict";

  /**
   * What the analytics service offers, as the page lists it: the windows, the metric catalogue
   * (`<group>.<name>`, the chains that have it), the daily topics, the rankings, the concentration
   * resources and distributions. The service answers a wrong choice with the valid values, so
   * these lists only shape the selectors.
   */
  var BOTH = ["chain-a", "chain-b"];
  var A = ["chain-a"];
  var B = ["chain-b"];

  function metric(name, description, unit, chains, bucketed) {
    return { key: name, name: name, description: description, unit: unit, chains: chains, bucketed: bucketed !== false,
      text: name + (chains.length === 1 ? (chains[0] === "chain-a" ? "  (chain A only)" : "  (chain B only)") : "") };
  }

  var METRICS = [
    metric("chain.blocks", "blocks made in the window", "blocks", BOTH),
    metric("chain.block_interval_avg", "mean seconds between consecutive blocks", "s", BOTH),
    metric("chain.epoch", "the current epoch", "epoch", BOTH),
    metric("tx.count", "transactions (chain B: regular ones; system transactions excluded)", "transactions", BOTH),
    metric("tx.system", "system transactions", "transactions", B),
    metric("tx.tps", "transactions per second over the window", "tx/s", BOTH),
    metric("tx.per_block", "transactions per block", "transactions", BOTH),
    metric("tx.failed", "failed transactions", "transactions", BOTH),
    metric("tx.failed_ratio", "failed transactions / transactions", "ratio", BOTH),
    metric("tx.shielded", "regular transactions with shielded (zswap) activity", "transactions", B),
    metric("tx.shielded_ratio", "shielded transactions / transactions", "ratio", B),
    metric("tx.script", "transactions running a script (chain A: redeemers; chain B: contract actions)", "transactions", BOTH),
    metric("contract.calls", "contract calls", "calls", B),
    metric("contract.deploys", "contract deployments", "deploys", B),
    metric("contract.active", "distinct contracts with an action", "contracts", B),
    metric("fee.total", "fees paid (chain A: lovelace; chain B: DUST, smallest unit)", "fee unit", BOTH),
    metric("fee.avg", "mean fee per transaction", "fee unit", BOTH),
    metric("fee.min", "smallest fee of a transaction", "fee unit", BOTH),
    metric("fee.max", "largest fee of a transaction", "fee unit", BOTH),
    metric("fee.p50", "median fee per transaction", "fee unit", BOTH, false),
    metric("fee.p95", "95th percentile of the fee per transaction", "fee unit", BOTH, false),
    metric("volume.output_lovelace", "lovelace in transaction outputs (change included)", "lovelace", A),
    metric("asset.mint_events", "mint and burn events of native assets", "events", A),
    metric("asset.active", "distinct native assets in transaction outputs", "assets", A),
    metric("address.active", "distinct addresses in inputs or outputs (chain B: unshielded owners)", "addresses", BOTH),
    metric("producer.count", "distinct block producers", "producers", BOTH),
    metric("producer.nakamoto", "fewest producers with more than half of the blocks", "producers", BOTH),
    metric("producer.gini", "Gini coefficient of blocks per producer", "ratio", BOTH),
    metric("producer.hhi", "Herfindahl-Hirschman index of blocks per producer", "index", BOTH),
    metric("producer.top10_share", "share of the blocks made by the 10 largest producers", "ratio", BOTH),
    metric("sync.lag_blocks", "blocks between the chain tip and the indexed height", "blocks", BOTH, false),
    metric("sync.reorgs", "reorganisations followed", "reorgs", BOTH, false)
  ];

  /** The key figures as keyFigures answers them, with the names the page gives them. */
  var KEY_FIGURES = {
    "chain.blocks": "Blocks",
    "tx.count": "Transactions",
    "tx.tps": "Transactions per second",
    "fee.total": "Fees paid",
    "fee.avg": "Mean fee",
    "address.active": "Active addresses",
    "producer.count": "Block producers",
    "tx.failed_ratio": "Failed transactions (share)"
  };

  var CHAINS = {
    "chain-a": { key: "chain-a", name: "Chain A", product: "Cardano", color: "#0070f2", fill: "rgba(0, 112, 242, 0.25)" },
    "chain-b": { key: "chain-b", name: "Chain B", product: "Midnight", color: "#a100c2", fill: "rgba(161, 0, 194, 0.25)" }
  };

  return {
    WINDOWS: [
      { key: "1h", text: "1 hour", span: "the last 60 complete minutes, by minute" },
      { key: "24h", text: "24 hours", span: "the last 24 complete hours, by hour" },
      { key: "7d", text: "7 days", span: "the last 7 complete UTC days, by day" },
      { key: "30d", text: "30 days", span: "the last 30 complete UTC days, by day" }
    ],
    METRICS: METRICS,
    /** The metrics anomalies are scored on: the ones kept in buckets. */
    ANOMALY_METRICS: METRICS.filter(function (entry) { return entry.bucketed; }),
    KEY_FIGURES: KEY_FIGURES,
    TOPICS: [
      { key: "blocks", text: "Blocks" },
      { key: "transactions", text: "Transactions" },
      { key: "fees", text: "Fees" },
      { key: "tokens", text: "Tokens" }
    ],
    RANKINGS: [
      { key: "producers", text: "Block producers (both chains)" },
      { key: "addresses", text: "Addresses by lovelace received (chain A)" },
      { key: "tokens", text: "Tokens by transactions (chain A)" },
      { key: "contracts", text: "Contracts by calls (chain B)" }
    ],
    RESOURCES: [
      { key: "blocks", text: "Blocks produced in the window" },
      { key: "stake", text: "Stake at the latest epoch snapshot" }
    ],
    DISTRIBUTIONS: [
      { key: "fees", text: "Fees per transaction" },
      { key: "sizes", text: "Transaction sizes" },
      { key: "stake", text: "Stake per pool" }
    ],
    CHAINS: CHAINS,
    chain: function (key) { return CHAINS[key] || { key: key, name: key, product: "", color: "#556b82", fill: "rgba(85, 107, 130, 0.25)" }; },
    metric: function (name) { return METRICS.filter(function (entry) { return entry.name === name; })[0]; }
  };
});
