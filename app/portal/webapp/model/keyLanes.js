sap.ui.define([
  "cag/portal/model/api",
  "cag/portal/wallet/bytes"
], function (api, bytes) {
  "use strict";

  /**
   * The three ways to a key, as the gateway offers them: wallet sign-in (CIP-30 signData over a
   * one-time message), a voucher code, and a purchase over x402 paid by the wallet (POST /keys, or
   * POST /topup for the key held). Each answers the gateway's own answer: a new key (shown once)
   * or a credit to the key held.
   */
  var SETTLE_POLL_MS = 1500;

  function delay(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  function signIn(wallet) {
    return api.post("/auth/challenge", { address: wallet.address }, { withKey: false }).then(function (challenge) {
      var c = challenge.body;
      return Promise.resolve(wallet.api.signData(wallet.addressHex, c.payloadHex)).then(function (signed) {
        return api.post("/auth/verify", { address: c.address, nonce: c.nonce, signature: signed.signature, key: signed.key }, { withKey: false });
      });
    }).then(function (answer) { return answer.body; });
  }

  function redeem(code, withKey) {
    return api.post("/vouchers/redeem", { code: code }, { withKey: !!withKey }).then(function (answer) { return answer.body; });
  }

  /** The PAYMENT-SIGNATURE header for a 402 answer: its prepared transaction signed by the wallet, as an x402 payload. */
  function paymentFor(required, wallet) {
    var accepted = required.accepts && required.accepts[0];
    var transaction = accepted && accepted.extra && accepted.extra.transaction;
    if (!transaction) return Promise.reject(new Error("The payment requirements carry no prepared transaction"));
    return Promise.resolve(wallet.api.signTx(transaction, true)).then(function (witnessSet) {
      var signed = bytes.withWitnesses(transaction, witnessSet);
      var payload = { transaction: bytes.hexToBase64(signed), nonce: accepted.extra.nonce };
      return bytes.utf8ToBase64(JSON.stringify({ x402Version: required.x402Version, resource: required.resource, accepted: accepted, payload: payload }));
    });
  }

  /**
   * Buys `pack` (POST /keys) or tops up the key held (POST /topup, `topUp`): quote (402), sign with
   * the wallet, then send the payment until it is settled; `progress` hears each step. The same
   * payment is sent again while the gateway answers settlement_pending (it resumes, never pays twice).
   */
  function buy(pack, wallet, topUp, progress) {
    var path = topUp ? "/topup" : "/keys";
    var options = { withKey: !!topUp, accept: [402] };
    progress("Asking for a quote for the " + pack + " pack…");
    return api.post(path, { pack: pack, payer: wallet.address }, options).then(function (quote) {
      if (quote.status !== 402) throw new Error("Expected the payment requirements (402), got " + quote.status);
      var accepted = quote.body.accepts[0];
      progress("Sign the payment of " + (Number(accepted.amount) / 1e6) + " ADA in " + wallet.name + "…");
      return paymentFor(quote.body, wallet).then(function (header) {
        var deadline = Date.now() + Math.max(60, Number(accepted.maxTimeoutSeconds) || 0) * 1000 * 2;
        var send = function () {
          return api.post(path, undefined, Object.assign({}, options, { headers: { "PAYMENT-SIGNATURE": header } })).then(function (answer) {
            if (answer.status !== 402) return answer.body;
            var error = answer.body && answer.body.error;
            if (!error || error.code !== "SETTLEMENT_PENDING") {
              var refused = new Error((error && error.message) || "The payment was refused");
              refused.code = error && error.code;
              throw refused;
            }
            if (Date.now() > deadline) throw new Error("The payment is still not settled: " + error.message);
            progress(error.message);
            return delay(SETTLE_POLL_MS).then(send);
          });
        };
        progress("Payment sent; waiting until it is settled on chain…");
        return send();
      });
    });
  }

  return { signIn: signIn, redeem: redeem, buy: buy };
});
