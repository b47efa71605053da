// Reports through @sentry/node (test/sentry-sdks.test.ts): three identical exceptions, then one message.
const Sentry = require('@sentry/node');

Sentry.init({
  dsn: process.env.SENTRY_DSN,
  serverName: 'node-host',
  release: 'shop@1.2.3',
  environment: 'test',
  // The SDK drops an event identical to the one before it; the test sends three on purpose.
  integrations: (defaults) => defaults.filter((integration) => integration.name !== 'Dedupe'),
});

function chargeCard() {
  throw new TypeError('card is undefined');
}

for (let i = 0; i < 3; i++) {
  try {
    chargeCard();
  } catch (error) {
    Sentry.captureException(error, { tags: { component: 'checkout' } });
  }
}
Sentry.captureMessage('cache warmed');
Sentry.close(10000).then((sent) => process.exit(sent ? 0 : 1));
