/**
 * Analytics over both chains: metrics folded per minute (the last two hours), hour and UTC day from what the chains'
 * followers index (never from the upstreams directly), and where each chain's folding stands.
 * Additive metrics (counts, totals) are summed from these buckets over a window; the others
 * (distinct counts, percentiles, concentration) are computed over the window's rows.
 */
namespace analytics;

type Figure : Decimal(38, 6);

@db.indexes: ['chain, network, resolution, metric, bucketStart']
entity MetricBuckets {
  /** chain-a or chain-b */
  key chain           : String(10);
  key network         : String(20);
  /** `<group>.<name>`, as srv/analytics/catalogue.ts lists them. */
  key metric          : String(40);
  /** '' for the whole chain; otherwise the dimension's value (a producer, an asset...). */
  key dimension       : String(120) default '';
  key resolution      : String(6) enum { minute; hour; day };
  key bucketStart     : Timestamp;
      /** The metric over the bucket: for a count the count, for a total the sum. */
      value           : Figure;
      /** How many items went into it (blocks, transactions, fees...). */
      count           : Integer64;
      sum             : Figure;
      /** The smallest and largest item (a fee, say); null for plain counts. */
      min             : Figure;
      max             : Figure;
      /** Every block the bucket covers is final: it is not computed again unless a reorg says so. */
      final           : Boolean;
      /** The indexed height the bucket was computed at. */
      sourceTipHeight : Integer64;
      computedAt      : Timestamp;
}

/** Per chain: the height folded into buckets so far, and the last reorg taken into account. */
entity BucketWriterState {
  key chain        : String(10);
      network      : String(20);
      foldedHeight : Integer64;
      foldedAt     : Timestamp;
      lastReorgAt  : Timestamp;
}

/**
 * Per chain and epoch: each entity's share of a resource. `producers`: blocks per producer (chain A:
 * pool; chain B: author key), from the indexed blocks of the epoch; `stake`: active stake per pool
 * (chain A), as the index held it when the epoch was folded.
 */
entity EpochSnapshots {
  key chain      : String(10);
  key network    : String(20);
  key epoch      : Integer;
  key resource   : String(10) enum { producers; stake };
  key entity     : String(120);
      value      : Figure;
      share      : Double;
      /** The epoch still runs (or its blocks are not final): computed again. */
      final      : Boolean;
      computedAt : Timestamp;
}
