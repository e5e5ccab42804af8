import { writerSettings } from '../../srv/analytics/settings.ts'

// The bucket writer's settings: each from its documented variable, else from cds.requires.analytics.writer, else the default.

test('defaults without variables or options; the test profile turns the writer off', () => {
  expect(writerSettings({}, {})).toEqual({ enabled: true, intervalMs: 10_000 })
  expect(writerSettings(undefined, {})).toEqual({ enabled: false, intervalMs: 10_000 })
})

test('ANALYTICS_WRITER_ENABLED sets writer.enabled, and wins over it', () => {
  expect(writerSettings({ analytics: { writer: { enabled: false } } }, {}).enabled).toBe(false)
  expect(writerSettings({}, { ANALYTICS_WRITER_ENABLED: 'false' }).enabled).toBe(false)
  expect(writerSettings({ analytics: { writer: { enabled: false } } }, { ANALYTICS_WRITER_ENABLED: 'true' }).enabled).toBe(true)
})

test('ANALYTICS_WRITER_INTERVAL_MS sets writer.intervalMs, and wins over it', () => {
  expect(writerSettings({ analytics: { writer: { intervalMs: 500 } } }, {}).intervalMs).toBe(500)
  expect(writerSettings({}, { ANALYTICS_WRITER_INTERVAL_MS: '700' }).intervalMs).toBe(700)
  expect(writerSettings({ analytics: { writer: { intervalMs: 500 } } }, { ANALYTICS_WRITER_INTERVAL_MS: '700' }).intervalMs).toBe(700)
  expect(() => writerSettings({}, { ANALYTICS_WRITER_INTERVAL_MS: 'often' })).toThrow("Setting ANALYTICS_WRITER_INTERVAL_MS must be a number, got 'often'")
})
