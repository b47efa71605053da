import { createHmac } from 'node:crypto';

/**
 * The headers that sign a webhook delivery (docs/reporting-and-alerts.md#verifying-a-delivery):
 * `X-Cmi-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` under the shared secret, so
 * a receiver can tell the body and the time came from cmi; `X-Cmi-Timestamp` (Unix seconds of this
 * try) lets it refuse old replays; `X-Cmi-Delivery` is the same on every try of one delivery.
 */
export function signedHeaders(secret: string, deliveryId: string, body: string, now: Date): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return {
    'content-type': 'application/json',
    'user-agent': 'cmi-webhooks',
    'x-cmi-delivery': deliveryId,
    'x-cmi-timestamp': timestamp,
    'x-cmi-signature': `sha256=${signature}`,
  };
}
