# Reports through Debian's python3-sentry-sdk (test/sentry-sdks.test.ts): three identical exceptions, then one message.
import os

import sentry_sdk


class PaymentDeclined(Exception):
    pass


def charge_card():
    raise PaymentDeclined("card 4242 declined")


sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], server_name="python-host", release="shop@1.2.3", environment="test")
sentry_sdk.set_tag("component", "payments")
for _ in range(3):
    try:
        charge_card()
    except PaymentDeclined as error:
        sentry_sdk.capture_exception(error)
sentry_sdk.capture_message("cache warmed")
sentry_sdk.flush(10)
