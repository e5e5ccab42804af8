sap.ui.define([], function () {
  "use strict";

  /**
   * Bytes for the wallet flows, in the browser: hex and base64 conversions, bech32 addresses
   * from the raw bytes CIP-30 wallets answer, and a CBOR reader just deep enough to put a wallet's
   * witness set into a transaction without touching its body bytes (the body is what was signed).
   */
  function hexToBytes(hex) {
    var bytes = new Uint8Array(hex.length / 2);
    for (var i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.substr(i * 2, 2), 16);
    return bytes;
  }

  function bytesToHex(bytes) {
    var hex = "";
    for (var i = 0; i < bytes.length; i++) hex += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
    return hex;
  }

  function hexToBase64(hex) {
    var bytes = hexToBytes(hex), binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary);
  }

  function utf8ToBase64(text) {
    return btoa(String.fromCharCode.apply(null, Array.from(new TextEncoder().encode(text))));
  }

  function utf8ToHex(text) {
    return bytesToHex(new TextEncoder().encode(text));
  }

  // ---- bech32 (BIP-173), for Shelley addresses -------------------------------------------------
  var CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  var GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

  function polymod(values) {
    var checksum = 1;
    values.forEach(function (value) {
      var top = checksum >>> 25;
      checksum = ((checksum & 0x1ffffff) << 5) ^ value;
      for (var i = 0; i < 5; i++) if ((top >>> i) & 1) checksum ^= GENERATORS[i];
    });
    return checksum;
  }

  function hrpExpand(hrp) {
    var high = [], low = [];
    for (var i = 0; i < hrp.length; i++) { high.push(hrp.charCodeAt(i) >>> 5); low.push(hrp.charCodeAt(i) & 31); }
    return high.concat([0], low);
  }

  function toFiveBits(bytes) {
    var result = [], accumulator = 0, bits = 0;
    for (var i = 0; i < bytes.length; i++) {
      accumulator = (accumulator << 8) | bytes[i];
      bits += 8;
      while (bits >= 5) { bits -= 5; result.push((accumulator >>> bits) & 31); }
    }
    if (bits > 0) result.push((accumulator << (5 - bits)) & 31);
    return result;
  }

  function bech32(hrp, bytes) {
    var data = toFiveBits(bytes);
    var check = polymod(hrpExpand(hrp).concat(data, [0, 0, 0, 0, 0, 0])) ^ 1;
    for (var i = 0; i < 6; i++) data.push((check >>> (5 * (5 - i))) & 31);
    return hrp + "1" + data.map(function (value) { return CHARSET.charAt(value); }).join("");
  }

  /** A Shelley address (hex bytes, as CIP-30 answers it) in bech32: addr…/stake… on mainnet, addr_test…/stake_test… elsewhere. */
  function addressToBech32(hex) {
    var bytes = hexToBytes(hex);
    var type = bytes[0] >> 4, mainnet = (bytes[0] & 15) === 1;
    if (type === 8) throw new Error("Byron addresses are not supported: use a Shelley address");
    var prefix = (type === 14 || type === 15 ? "stake" : "addr") + (mainnet ? "" : "_test");
    return bech32(prefix, bytes);
  }

  // ---- CBOR ------------------------------------------------------------------------------------

  /** The end offset of the CBOR item starting at `offset`. */
  function skipItem(bytes, offset) {
    var head = readHead(bytes, offset);
    switch (head.major) {
      case 0: case 1: case 7: return head.next;
      case 2: case 3:
        if (head.indefinite) { var at = head.next; while (bytes[at] !== 0xff) at = skipItem(bytes, at); return at + 1; }
        return head.next + head.value;
      case 4: case 5:
        var next = head.next, count = head.major === 5 ? head.value * 2 : head.value;
        if (head.indefinite) { while (bytes[next] !== 0xff) next = skipItem(bytes, next); return next + 1; }
        for (var i = 0; i < count; i++) next = skipItem(bytes, next);
        return next;
      case 6: return skipItem(bytes, head.next);
    }
    throw new Error("Not CBOR");
  }

  function readHead(bytes, offset) {
    if (offset >= bytes.length) throw new Error("The CBOR ends early");
    var first = bytes[offset], major = first >> 5, info = first & 31;
    if (info < 24) return { major: major, value: info, next: offset + 1 };
    if (info === 31) return { major: major, indefinite: true, next: offset + 1 };
    var size = { 24: 1, 25: 2, 26: 4, 27: 8 }[info];
    if (!size) throw new Error("Not CBOR");
    var value = 0;
    for (var i = 1; i <= size; i++) value = value * 256 + bytes[offset + i];
    return { major: major, value: value, next: offset + 1 + size };
  }

  /** A map's entries as { key, bytes } (the raw bytes of key and value); only definite maps with unsigned-integer keys. */
  function mapEntries(bytes) {
    var head = readHead(bytes, 0);
    if (head.major !== 5 || head.indefinite) throw new Error("A witness set must be a CBOR map");
    var entries = [], at = head.next;
    for (var i = 0; i < head.value; i++) {
      var key = readHead(bytes, at);
      var valueStart = key.next, valueEnd = skipItem(bytes, valueStart);
      entries.push({ key: key.value, value: bytes.slice(valueStart, valueEnd) });
      at = valueEnd;
    }
    return entries;
  }

  function encodeHead(major, value) {
    if (value < 24) return [(major << 5) | value];
    if (value < 256) return [(major << 5) | 24, value];
    if (value < 65536) return [(major << 5) | 25, value >> 8, value & 255];
    return [(major << 5) | 26, (value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255];
  }

  /** The items of a CBOR array, possibly under tag 258 (a set): { tagged, items: [raw bytes] }. */
  function arrayItems(bytes) {
    var at = 0, tagged = false;
    var head = readHead(bytes, at);
    if (head.major === 6 && head.value === 258) { tagged = true; at = head.next; head = readHead(bytes, at); }
    if (head.major !== 4) throw new Error("Expected a CBOR array");
    var items = [], next = head.next;
    if (head.indefinite) {
      while (bytes[next] !== 0xff) { var end = skipItem(bytes, next); items.push(bytes.slice(next, end)); next = end; }
    } else {
      for (var i = 0; i < head.value; i++) { var stop = skipItem(bytes, next); items.push(bytes.slice(next, stop)); next = stop; }
    }
    return { tagged: tagged, items: items };
  }

  function concat(parts) {
    var length = parts.reduce(function (sum, part) { return sum + part.length; }, 0);
    var result = new Uint8Array(length), at = 0;
    parts.forEach(function (part) { result.set(part, at); at += part.length; });
    return result;
  }

  /**
   * The signed transaction: `txHex` with the wallet's witness set (CIP-30 signTx(tx, true)) added
   * to its own. The body, validity flag and auxiliary data keep their exact bytes; vkey witnesses
   * are joined, any other witness kind the transaction lacks is taken from the wallet's set.
   */
  function withWitnesses(txHex, witnessSetHex) {
    var tx = hexToBytes(txHex);
    var head = readHead(tx, 0);
    if (head.major !== 4 || head.indefinite || head.value !== 4) throw new Error("Not a transaction (a CBOR array of 4)");
    var bodyEnd = skipItem(tx, head.next), witnessEnd = skipItem(tx, bodyEnd);
    var own = mapEntries(tx.slice(bodyEnd, witnessEnd));
    var added = mapEntries(hexToBytes(witnessSetHex));
    var merged = own.slice();
    added.forEach(function (entry) {
      var existing = merged.filter(function (mine) { return mine.key === entry.key; })[0];
      if (!existing) { merged.push(entry); return; }
      if (entry.key !== 0) return;
      var mine = arrayItems(existing.value), theirs = arrayItems(entry.value);
      var items = mine.items.concat(theirs.items);
      existing.value = concat([new Uint8Array(mine.tagged ? [0xd9, 0x01, 0x02] : []), new Uint8Array(encodeHead(4, items.length))].concat(items));
    });
    merged.sort(function (a, b) { return a.key - b.key; });
    var witnessSet = concat([new Uint8Array(encodeHead(5, merged.length))].concat(merged.reduce(function (parts, entry) {
      return parts.concat([new Uint8Array(encodeHead(0, entry.key)), entry.value]);
    }, [])));
    return bytesToHex(concat([tx.slice(0, bodyEnd), witnessSet, tx.slice(witnessEnd)]));
  }

  return {
    hexToBytes: hexToBytes,
    bytesToHex: bytesToHex,
    hexToBase64: hexToBase64,
    utf8ToBase64: utf8ToBase64,
    utf8ToHex: utf8ToHex,
    addressToBech32: addressToBech32,
    withWitnesses: withWitnesses
  };
});
