// onnx-shape-derived-sizes.mlir - ONNX ops whose output size comes from a
// shape computation on a dynamic dim (not a constant): HannWindow(size =
// Shape(x)[0]), TopK(x, K = Shape(x)), and Resize(img, sizes = Concat(
// Shape(img)[0:1], [1, 4, 4])), compiled once and run at two sizes.
// Expected values are independent of Turbine: numpy's periodic Hann window
// 0.5 - 0.5 cos(2 pi n / N) (N=4: 0 0.5 1 0.5; N=3: 0 0.75 0.75), a full
// descending sort with ties in index order, and nearest 2x upsampling with
// half_pixel + round_prefer_floor (source rows/cols 0 0 1 1), the ONNX
// reference's result.

// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; \
// RUN:   vi = helper.make_tensor_value_info; node = helper.make_node; \
// RUN:   g = helper.make_graph([node('Shape', ['x'], ['s']), node('Gather', ['s', 'zero'], ['size']), \
// RUN:     node('HannWindow', ['size'], ['window']), node('TopK', ['x', 's'], ['values', 'indices']), \
// RUN:     node('Shape', ['img'], ['imgshape']), node('Gather', ['imgshape', 'first'], ['batch']), \
// RUN:     node('Concat', ['batch', 'rest'], ['sizes'], axis=0), \
// RUN:     node('Resize', ['img', '', '', 'sizes'], ['resized'], mode='nearest')], 'g', \
// RUN:     [vi('x', T.FLOAT, ['n']), vi('img', T.FLOAT, ['n', 1, 2, 2])], \
// RUN:     [vi('window', T.FLOAT, ['n']), vi('values', T.FLOAT, ['n']), vi('indices', T.INT64, ['n']), \
// RUN:      vi('resized', T.FLOAT, ['n', 1, 4, 4])], \
// RUN:     [helper.make_tensor('zero', T.INT64, [], [0]), helper.make_tensor('first', T.INT64, [1], [0]), \
// RUN:      helper.make_tensor('rest', T.INT64, [3], [1, 4, 4])]); \
// RUN:   onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), '%t.onnx')"
// RUN: %turbine compile %t.onnx -o %t.tmod
// RUN: %turbine run %t.tmod --device=local-sync --input="4xf32=3 1 4 1" \
// RUN:   --input="4x1x2x2xf32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15" | FileCheck %s --check-prefix=N4
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 --input="3xf32=2 7 2" \
// RUN:   --input="3x1x2x2xf32=0 1 2 3 4 5 6 7 8 9 10 11" | FileCheck %s --check-prefix=N3

// N4:      result[0]: hal.buffer_view
// N4-NEXT: 4xf32=0 0.5 1 0.5{{$}}
// N4:      4xf32=4 3 1 1{{$}}
// N4:      4xi64=2 0 1 3{{$}}
// N4:      4x1x4x4xf32=[{{\[}}[0 0 1 1][0 0 1 1][2 2 3 3][2 2 3 3]]][{{\[}}[4 4 5 5][4 4 5 5][6 6 7 7][6 6 7 7]]][{{\[}}[8 8 9 9][8 8 9 9][10 10 11 11][10 10 11 11]]][{{\[}}[12 12 13 13][12 12 13 13][14 14 15 15][14 14 15 15]]]{{$}}

// N3:      result[0]: hal.buffer_view
// N3-NEXT: 3xf32=0 0.75 0.75{{$}}
// N3:      3xf32=7 2 2{{$}}
// N3:      3xi64=1 0 2{{$}}
// N3:      3x1x4x4xf32=[{{\[}}[0 0 1 1][0 0 1 1][2 2 3 3][2 2 3 3]]][{{\[}}[4 4 5 5][4 4 5 5][6 6 7 7][6 6 7 7]]][{{\[}}[8 8 9 9][8 8 9 9][10 10 11 11][10 10 11 11]]]{{$}}
