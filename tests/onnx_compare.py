#!/usr/bin/env python3
"""Checks an ONNX file exported by `anycl export` with real ONNX implementations: the onnx
checker (full_check, with shape inference) and onnxruntime's evaluation of the graph, compared
with anycl's own probabilities on the same images.

usage: onnx_compare.py MODEL.onnx IMAGES_IDX[.gz] ANYCL_PROBS.f32 COUNT
Exit 0: max |p_onnx - p_anycl| <= 1e-5 and identical argmax; 1: a mismatch; 77: onnx,
onnxruntime or numpy is not installed (the caller skips)."""
import gzip
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
except ImportError as e:  # the C++ test turns this into a skip with the message
    print(f"skipped: {e} — pip install onnxruntime onnx numpy (tools/setup.sh does, into build/onnx-venv)")
    sys.exit(77)


def read_idx_images(path, count):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, n, rows, cols = np.frombuffer(data[:16], dtype=">u4")
    assert magic == 0x803, f"{path}: not an IDX image file"
    pixels = np.frombuffer(data[16:], dtype=np.uint8).reshape(n, rows * cols)[:count]
    return pixels.astype(np.float32) / np.float32(255.0)


def main():
    model_path, images_path, probs_path, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    opset = {o.domain: o.version for o in model.opset_import}[""]
    assert opset >= 13, f"opset {opset} < 13"
    (inp,), (out,) = model.graph.input, model.graph.output
    batch_dim = inp.type.tensor_type.shape.dim[0]
    assert batch_dim.dim_param and not batch_dim.HasField("dim_value"), "batch dimension is not dynamic"
    print(f"onnx {onnx.__version__} checker: ok (opset {opset}, ir {model.ir_version}, "
          f"{[n.op_type for n in model.graph.node]}); input '{inp.name}', output '{out.name}'")

    x = read_idx_images(images_path, count)
    want = np.fromfile(probs_path, dtype=np.float32).reshape(count, -1)
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    got = session.run([out.name], {inp.name: x})[0]
    one = session.run([out.name], {inp.name: x[:1]})[0]  # the dynamic batch dimension at work
    diff = float(np.max(np.abs(got - want)))
    same = int(np.sum(np.argmax(got, 1) == np.argmax(want, 1)))
    print(f"onnxruntime {ort.__version__}: {count} images, max |p_onnx - p_anycl| = {diff:.3g}, "
          f"argmax identical for {same}/{count}")
    ok = got.shape == want.shape and diff <= 1e-5 and same == count and np.allclose(one, got[:1], atol=1e-6)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
