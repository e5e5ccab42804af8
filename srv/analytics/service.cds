using { analytics as db } from '../../db/analytics';
using { ChainAFollowerIndex as chaina } from '../chaina-odata/follower-index';
using { ChainBIndex as chainb } from '../chainb-indexer/chain-index';

/**
 * Analytics over both chains, read-only, computed from what the chain-A and chain-B followers
 * index (never from the upstreams): the metric buckets and epoch snapshots the writer folds, the
 * followers' reorgs and sync status, and functions over windows of 1h, 24h, 7d and 30d.
 * Values are JSON numbers (Double); a figure that cannot be worked out (nothing to divide by, no
 * history yet) is null. Choice parameters are plain strings, so a wrong one is answered with the
 * list of valid values (400 UNKNOWN_METRIC, INVALID_WINDOW...) rather than a length check.
 */
@path: 'analytics'
@requires: 'authenticated-user'
service AnalyticsService {

  @readonly entity MetricBuckets  as projection on db.MetricBuckets;
  @readonly entity EpochSnapshots as projection on db.EpochSnapshots;

  /** Both chains' reorgs: the blocks from forkHeight on were replaced. */
  @readonly entity Reorgs as
    select from chaina.ReorgLog { key 'chain-a' as chain : String(10), key ID, detectedAt, forkHeight, oldTipHash, newTipHash, blocksRolledBack, cause }
    union all
    select from chainb.ReorgLog { key 'chain-b' as chain : String(10), key ID, detectedAt, forkHeight, oldTipHash, newTipHash, blocksRolledBack, cause };

  /** Where each chain's follower and the bucket writer stand. */
  @readonly entity SyncStatus as
    select from chaina.SyncState { key 'chain-a' as chain : String(10), network, chainHeight, chainTipAt, indexedHeight, indexedHash, indexedAt, finalizedHeight, status, lastError, lastErrorAt, reorgs, paused }
    union all
    select from chainb.SyncState { key 'chain-b' as chain : String(10), network, chainHeight, chainTipAt, indexedHeight, indexedHash, indexedAt, finalizedHeight, status, lastError, lastErrorAt, reorgs, paused };

  @readonly entity BucketWriterState as projection on db.BucketWriterState;

  type SeriesPoint {
    bucketStart : Timestamp;
    value       : Double;
  }

  /** One metric on one chain over a window, its previous window and its series. */
  type ChainFigure {
    chain         : String(10);
    network       : String(20);
    metric        : String(40);
    unit          : String(40);
    /** False when the metric does not exist on this chain; `note` says why. */
    available     : Boolean;
    note          : String(300);
    value         : Double;
    previous      : Double;
    /** (value - previous) / previous in percent; null when previous is 0 or unknown. */
    changePercent : Double;
    series        : many SeriesPoint;
  }

  type WindowSpan {
    window       : String(3);
    /** minute, hour or day: the resolution of the series. */
    resolution   : String(6);
    /** [windowStart, windowEnd): whole buckets, ending where the current one begins. */
    windowStart   : Timestamp;
    windowEnd     : Timestamp;
    previousStart : Timestamp;
    previousEnd   : Timestamp;
  }

  type Comparison : WindowSpan {
    metric      : String(40);
    description : String(300);
    chains      : many ChainFigure;
  }

  type KeyFigures : WindowSpan {
    figures : many ChainFigure;
  }

  type ChainOverview {
    chain              : String(10);
    network            : String(20);
    /** The chain's tip as the follower last saw it, and the indexed height. */
    tipHeight          : Integer;
    indexedHeight      : Integer;
    finalizedHeight    : Integer;
    lagBlocks          : Integer;
    syncStatus         : String(10);
    epoch              : Integer;
    /** Transactions per second over the last complete 60 minutes. */
    tps                : Double;
    /** The current hour and the 23 before it. */
    blocks24h          : Double;
    transactions24h    : Double;
    fees24h            : Double;
    feeUnit            : String(40);
    activeAddresses24h : Double;
    producers24h       : Double;
    reorgs24h          : Double;
  }

  type Overview {
    generatedAt : Timestamp;
    chains      : many ChainOverview;
  }

  type DailyRow {
    day      : Date;
    chain    : String(10);
    metric   : String(40);
    value    : Double;
    /** False for today (still counting) and days whose blocks are not all final. */
    complete : Boolean;
  }

  type DailyTable {
    topic   : String(20);
    days    : Integer;
    metrics : many String(40);
    rows    : many DailyRow;
  }

  type RankingEntry {
    chain  : String(10);
    rank   : Integer;
    entity : String(120);
    value  : Double;
    /** value / the chain's total over the window. */
    share  : Double;
  }

  type Ranking : WindowSpan {
    ranking : String(20);
    metric  : String(40);
    unit    : String(40);
    /** Chains without this ranking, and why. */
    notes   : many String(300);
    entries : many RankingEntry;
  }

  type ConcentrationFigure {
    chain      : String(10);
    available  : Boolean;
    note       : String(300);
    /** What was measured: `blocks in <window>` or `stake at epoch <n>`. */
    basis      : String(60);
    entities   : Integer;
    total      : Double;
    gini       : Double;
    nakamoto   : Integer;
    hhi        : Double;
    top10Share : Double;
  }

  type Concentration {
    resource : String(10);
    window   : String(3);
    chains   : many ConcentrationFigure;
  }

  /** Values in [lower, upper); the last bin includes its upper bound. */
  type HistogramBin {
    lower : Double;
    upper : Double;
    count : Integer;
  }

  type DistributionFigure {
    chain     : String(10);
    available : Boolean;
    note      : String(300);
    unit      : String(40);
    count     : Integer;
    min       : Double;
    max       : Double;
    mean      : Double;
    p50       : Double;
    p95       : Double;
    bins      : many HistogramBin;
  }

  type Distribution : WindowSpan {
    distribution : String(10);
    chains       : many DistributionFigure;
  }

  type AnomalyPoint {
    chain          : String(10);
    bucketStart    : Timestamp;
    value          : Double;
    /** The baseline: its median and median absolute deviation, and how many points it used. */
    baselineMedian : Double;
    baselineMad    : Double;
    baselinePoints : Integer;
    /** same-hour-of-week, same-hour-of-day or previous-days. */
    baselineKind   : String(20);
    score          : Double;
    anomaly        : Boolean;
    note           : String(300);
  }

  type Anomalies : WindowSpan {
    metric    : String(40);
    method    : String(200);
    threshold : Double;
    minPoints : Integer;
    points    : many AnomalyPoint;
    /** The points flagged, for a quick look. */
    flagged   : many AnomalyPoint;
  }

  type Rebuild {
    chain       : String(10);
    hours       : Integer;
    foldedHeight : Integer;
  }

  type FollowerControl {
    chain   : String(10);
    paused  : Boolean;
    message : String(300);
  }

  /** Both chains at a glance: tip, epoch, tps, fees, active addresses, producers, sync status. */
  function overview() returns Overview;
  /** The key figures of both chains over a window (1h, 24h, 7d, 30d), against the previous window, with their series. */
  function keyFigures(window : String) returns KeyFigures;
  /** One metric (`<group>.<name>`) on both chains over a window. */
  function compare(metric : String, window : String) returns Comparison;
  /** A table per UTC day for the last `days` days (today included), for a topic: blocks, transactions, fees or tokens. */
  function daily(topic : String, days : Integer) returns DailyTable;
  /** The top entities over a window: producers, addresses (by volume), tokens (by transactions) or contracts (by calls). */
  function rankings(ranking : String, window : String, top : Integer) returns Ranking;
  /** Gini, Nakamoto, HHI and top-10 share of blocks produced over a window, or of stake at the latest epoch snapshot. */
  function concentration(resource : String, window : String) returns Concentration;
  /** A histogram with percentiles: fees or sizes of transactions over a window, or stake per pool. */
  function distributions(distribution : String, window : String, bins : Integer) returns Distribution;
  /** Robust z-scores of a metric's buckets in a window against the same hour of previous weeks (or days), or the previous 30 days. */
  function anomalies(metric : String, window : String) returns Anomalies;

  /** Internals (self-hosted operators; closed on the hosted API). Folds a chain's buckets again from a time (default: everything indexed). */
  @requires: 'admin' action rebuildBuckets(chain : String, fromTime : Timestamp) returns many Rebuild;
  @requires: 'admin' action pauseFollower(chain : String) returns FollowerControl;
  @requires: 'admin' action resumeFollower(chain : String) returns FollowerControl;
}
