import { settleAll } from '../../srv/lib/settle-all.ts'

test('answers every value in order', async () => {
  expect(await settleAll([Promise.resolve(1), Promise.resolve('two')])).toEqual([1, 'two'])
})

test('a rejection is answered only once everything else has settled', async () => {
  let slowDone = false
  const slow = new Promise(resolve => setTimeout(() => resolve((slowDone = true)), 50))
  await expect(settleAll([Promise.reject(new Error('first')), slow])).rejects.toThrow('first')
  expect(slowDone).toBe(true)
})
