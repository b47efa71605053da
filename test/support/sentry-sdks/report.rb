# Reports through Debian's ruby-sentry-raven (test/sentry-sdks.test.ts): three identical exceptions, then one message.
require 'raven'

class PaymentDeclined < StandardError; end

def charge_card
  raise PaymentDeclined, 'card declined'
end

Raven.configure do |config|
  config.dsn = ENV.fetch('SENTRY_DSN')
  config.server_name = 'ruby-host'
  config.release = 'shop@1.2.3'
  config.current_environment = 'test'
  config.tags = { component: 'billing-ruby' }
  config.logger = Logger.new(nil)
end

3.times do
  charge_card
rescue PaymentDeclined => e
  Raven.capture_exception(e)
end
Raven.capture_message('cache warmed')
