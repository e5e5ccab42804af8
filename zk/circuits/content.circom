pragma circom 2.1.0;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/comparators.circom";
include "circomlib/circuits/bitify.circom";

// The content tree of a document: 16 salted leaves, Poseidon over BN254.
// leaf = Poseidon(fieldKey, kind, scale, value, salt); node = Poseidon(left, right).
// kind: 0 a whole number (value = the field's value times scale), 1 bytes (value = the
// field element of the SHA-256 of the text), 2 absent (value 0, scale 0).

template Leaf() {
    signal input key;
    signal input kind;
    signal input scale;
    signal input value;
    signal input salt;
    signal output out;
    component hash = Poseidon(5);
    hash.inputs[0] <== key;
    hash.inputs[1] <== kind;
    hash.inputs[2] <== scale;
    hash.inputs[3] <== value;
    hash.inputs[4] <== salt;
    out <== hash.out;
}

// The root reached from a leaf by its path; dirs[i] = 1 when the node at level i is the left child.
template PathRoot(depth) {
    signal input leaf;
    signal input siblings[depth];
    signal input dirs[depth];
    signal output root;
    signal nodes[depth + 1];
    signal left[depth];
    component hashes[depth];
    nodes[0] <== leaf;
    for (var i = 0; i < depth; i++) {
        dirs[i] * (1 - dirs[i]) === 0;
        left[i] <== siblings[i] + dirs[i] * (nodes[i] - siblings[i]);
        hashes[i] = Poseidon(2);
        hashes[i].inputs[0] <== left[i];
        hashes[i].inputs[1] <== nodes[i] + siblings[i] - left[i];
        nodes[i + 1] <== hashes[i].out;
    }
    root <== nodes[depth];
}

// The root of 16 leaves, slot 0 leftmost.
template TreeRoot() {
    signal input leaves[16];
    signal output root;
    component hashes[15];
    signal level[31];
    for (var i = 0; i < 16; i++) level[i] <== leaves[i];
    for (var i = 0; i < 15; i++) {
        hashes[i] = Poseidon(2);
        hashes[i].inputs[0] <== level[2 * i];
        hashes[i].inputs[1] <== level[2 * i + 1];
        level[16 + i] <== hashes[i].out;
    }
    root <== level[30];
}

// Public inputs that no other constraint uses are bound to the proof by a constraint of their own.
template Bind() {
    signal input in;
    signal square;
    square <== in * in;
}
