!s = tensor<2x1152xf32>
!si = tensor<2x1152xi32>
!n = tensor<2xi32>
!used = tensor<2x992xf32>
!span = tensor<2x1120xf32>
!blocks = tensor<2x7x160xf32>
!part = tensor<2x4x160xf32>
!head = tensor<2x4x32xf32>
!frames = tensor<2x4x512xf32>
!rest = tensor<2x4x511xf32>
!first = tensor<2x4x1xf32>
!w = tensor<512xf32>
func.func private @mel_framing_B2_T4_S1152(%samples: !s, %count: !n, %window: !w) -> !frames {
  %position = stablehlo.iota dim = 1 : !si
  %limit = stablehlo.broadcast_in_dim %count, dims = [0] : (!n) -> !si
  %real = stablehlo.compare LT, %position, %limit, SIGNED : (!si, !si) -> tensor<2x1152xi1>
  %zeros = stablehlo.constant dense<0.000000e+00> : !s
  %x = stablehlo.select %real, %samples, %zeros : tensor<2x1152xi1>, !s
  %current = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 992>, strides = array<i64: 1, 1>} : (!s) -> !used
  %earlier = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 991>, strides = array<i64: 1, 1>} : (!s) -> tensor<2x991xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %previous = stablehlo.pad %earlier, %zero, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<2x991xf32>, tensor<f32>) -> !used
  %coefficient_s = stablehlo.constant dense<0x3F7851EC> : tensor<f32>
  %coefficient = stablehlo.broadcast_in_dim %coefficient_s, dims = [] : (tensor<f32>) -> tensor<2x992xf32>
  %scaled_raw = stablehlo.multiply %coefficient, %previous : !used
  %scaled = stablehlo.optimization_barrier %scaled_raw : !used
  %emphasised = stablehlo.subtract %current, %scaled : !used
  %emphasised_span = stablehlo.pad %emphasised, %zero, low = [0, 0], high = [0, 128], interior = [0, 0] : (!used, tensor<f32>) -> !span
  %emphasised_blocks = stablehlo.reshape %emphasised_span : (!span) -> !blocks
  %part0 = "stablehlo.slice"(%emphasised_blocks) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 4, 160>, strides = array<i64: 1, 1, 1>} : (!blocks) -> !part
  %part1 = "stablehlo.slice"(%emphasised_blocks) {start_indices = array<i64: 0, 1, 0>, limit_indices = array<i64: 2, 5, 160>, strides = array<i64: 1, 1, 1>} : (!blocks) -> !part
  %part2 = "stablehlo.slice"(%emphasised_blocks) {start_indices = array<i64: 0, 2, 0>, limit_indices = array<i64: 2, 6, 160>, strides = array<i64: 1, 1, 1>} : (!blocks) -> !part
  %part3 = "stablehlo.slice"(%emphasised_blocks) {start_indices = array<i64: 0, 3, 0>, limit_indices = array<i64: 2, 7, 32>, strides = array<i64: 1, 1, 1>} : (!blocks) -> !head
  %emphasised_frames = stablehlo.concatenate %part0, %part1, %part2, %part3, dim = 2 : (!part, !part, !part, !head) -> !frames
  %later = "stablehlo.slice"(%emphasised_frames) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 2, 4, 512>, strides = array<i64: 1, 1, 1>} : (!frames) -> !rest
  %current_span = stablehlo.pad %current, %zero, low = [0, 0], high = [0, 128], interior = [0, 0] : (!used, tensor<f32>) -> !span
  %current_blocks = stablehlo.reshape %current_span : (!span) -> !blocks
  %starts = "stablehlo.slice"(%current_blocks) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 4, 1>, strides = array<i64: 1, 1, 1>} : (!blocks) -> !first
  %first_coefficient_s = stablehlo.constant dense<0x3CF5C28F> : tensor<f32>
  %first_coefficient = stablehlo.broadcast_in_dim %first_coefficient_s, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
  %first = stablehlo.multiply %starts, %first_coefficient : !first
  %emphasised_all = stablehlo.concatenate %first, %later, dim = 2 : (!first, !rest) -> !frames
  %window_b = stablehlo.broadcast_in_dim %window, dims = [2] : (!w) -> !frames
  %windowed = stablehlo.multiply %emphasised_all, %window_b : !frames
  return %windowed : !frames
}
