import { Type, type Static } from 'typebox';
import { HOUR_MS, MINUTE_MS } from '../platform/config/duration.js';

/** The spans a chart may cover: each a whole number of hours, none longer than the counts are kept (48 h). */
export const TRAFFIC_RANGES = { '1h': HOUR_MS, '6h': 6 * HOUR_MS, '24h': 24 * HOUR_MS, '48h': 48 * HOUR_MS } as const;
export const TRAFFIC_BUCKETS = { minute: MINUTE_MS, hour: HOUR_MS } as const;
export type TrafficRange = keyof typeof TRAFFIC_RANGES;
export type TrafficBucketName = keyof typeof TRAFFIC_BUCKETS;

export const TrafficQuerySchema = Type.Object({
  range: Type.Optional(
    Type.Enum(Object.keys(TRAFFIC_RANGES) as TrafficRange[], {
      description: 'How far back the chart goes, up to now: 1h, 6h, 24h or 48h (24h when absent).',
    }),
  ),
  bucket: Type.Optional(
    Type.Enum(Object.keys(TRAFFIC_BUCKETS) as TrafficBucketName[], {
      description: 'What one point counts: a minute or an hour (hour when absent); buckets start on whole minutes or hours, UTC.',
    }),
  ),
});

function counts(what: string) {
  return Type.Array(Type.Integer({ minimum: 0 }), { description: `${what}, one number per bucket, oldest first` });
}

const TIME = { description: 'RFC 3339 UTC with milliseconds' };

/** A source's traffic, bucket by bucket (README, "A picture of the traffic"). */
export const TrafficSchema = Type.Object({
  source: Type.String(),
  bucket: Type.Enum(Object.keys(TRAFFIC_BUCKETS) as TrafficBucketName[]),
  bucketSeconds: Type.Integer({ description: 'The length of one bucket: 60 or 3600' }),
  from: Type.String({ description: 'The first bucket’s start (RFC 3339 UTC)' }),
  to: Type.String({ description: 'The last bucket’s end (RFC 3339 UTC); the last bucket is still filling' }),
  delivered: counts('Deliveries stored (duplicates not; deleted ones still counted)'),
  refused: counts('Requests refused (CONTRACT 9), those the refusal writer could not keep included'),
  forwarded: counts('Forwards that succeeded'),
  forwardFailed: counts('Forward attempts that failed'),
  dead: counts('Forwards that became failed (the dead letter); each is also a failed attempt'),
});
export type TrafficJson = Static<typeof TrafficSchema>;

/** The last 24 hours of a source, hour by hour, as `GET /api/sources?traffic=24h` adds it to each source. */
export const SparklineSchema = Type.Object(
  {
    from: Type.String(TIME),
    bucketSeconds: Type.Integer(),
    delivered: counts('Deliveries stored'),
    refused: counts('Requests refused'),
  },
  { description: 'With traffic=24h: 24 hours, the last one the current (still filling) hour' },
);
export type SparklineJson = Static<typeof SparklineSchema>;
