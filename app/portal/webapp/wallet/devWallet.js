sap.ui.define([], function () {
  "use strict";

  /**
   * The development wallet: where the server embeds the chain-A devnet (development and tests,
   * never production), GET /dev-wallet lists its funded test wallets, and each becomes a CIP-30
   * wallet in `window.cardano` ("devnet-1", "devnet-2", …) whose keys stay on the server. A real
   * extension wallet sits beside them and is used the same way.
   */
  var ICON = "data:image/svg+xml," + encodeURIComponent("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'><rect width='32' height='32' rx='8' fill='#188918'/><text x='16' y='22' font-size='16' text-anchor='middle' fill='#fff' font-family='sans-serif'>D</text></svg>");

  function call(method, path, body) {
    var init = { method: method, headers: { Accept: "application/json" } };
    if (body) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch("/dev-wallet" + path, init).then(function (response) {
      return response.json().then(function (answer) {
        if (response.ok) return answer;
        // CIP-30 errors: { code, info }; a refused signature is a SignError, a refused transaction a TxSendError.
        throw { code: path === "/submit-tx" ? 2 : 1, info: (answer.error && answer.error.message) || ("HTTP " + response.status) };
      });
    });
  }

  function walletApi(wallet) {
    return {
      getNetworkId: function () { return Promise.resolve(0); },
      getUsedAddresses: function () { return Promise.resolve([wallet.addressHex]); },
      getUnusedAddresses: function () { return Promise.resolve([]); },
      getChangeAddress: function () { return Promise.resolve(wallet.addressHex); },
      getRewardAddresses: function () { return Promise.resolve([wallet.stakeAddressHex]); },
      getBalance: function () { return call("GET", "/utxos?wallet=" + wallet.wallet).then(function (answer) { return answer.balance; }); },
      getUtxos: function () { return call("GET", "/utxos?wallet=" + wallet.wallet).then(function (answer) { return answer.utxos; }); },
      signTx: function (tx) { return call("POST", "/sign-tx", { wallet: wallet.wallet, tx: tx }).then(function (answer) { return answer.witnessSet; }); },
      signData: function (address, payload) { return call("POST", "/sign-data", { wallet: wallet.wallet, address: address, payload: payload }); },
      submitTx: function (tx) { return call("POST", "/submit-tx", { tx: tx }).then(function (answer) { return answer.txHash; }); }
    };
  }

  /** Installs the devnet's wallets in window.cardano when the server offers them; answers how many. */
  function install() {
    return fetch("/dev-wallet", { headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : { wallets: [] }; })
      .catch(function () { return { wallets: [] }; })
      .then(function (answer) {
        window.cardano = window.cardano || {};
        answer.wallets.forEach(function (wallet) {
          window.cardano["devnet-" + wallet.wallet] = {
            name: wallet.name,
            icon: ICON,
            apiVersion: "0.1.0",
            isDevelopmentWallet: true,
            isEnabled: function () { return Promise.resolve(true); },
            enable: function () { return Promise.resolve(walletApi(wallet)); }
          };
        });
        return answer.wallets.length;
      });
  }

  return { install: install };
});
