!e = tensor<8x48xf32>
!ids = tensor<8xi32>
!idx = tensor<8x1xi32>
!mask = tensor<8x48xi1>
func.func private @token_merge_C8_H48_A188(%ids: !ids, %text_rows: tensor<8x48xbf16>, %hard: tensor<128x48xf32>, %audio: tensor<188x48xf32>, %row_map: !ids, %length: tensor<i32>) -> !e {
  %text = stablehlo.convert %text_rows : (tensor<8x48xbf16>) -> !e
  %scale_s = stablehlo.constant dense<0x40DE0000> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %scale_s, dims = [] : (tensor<f32>) -> tensor<8x48xf32>
  %text_scaled = stablehlo.multiply %text, %scale : !e
  %text_embeds = stablehlo.reduce_precision %text_scaled, format = e8m7 : !e
  %offset = stablehlo.constant dense<262272> : !ids
  %is_audio = stablehlo.compare GE, %ids, %offset, SIGNED : (!ids, !ids) -> tensor<8xi1>
  %local = stablehlo.subtract %ids, %offset : !ids
  %dummy = stablehlo.constant dense<127> : !ids
  %hard_index = stablehlo.select %is_audio, %local, %dummy : tensor<8xi1>, !ids
  %hard_index_2d = stablehlo.reshape %hard_index : (!ids) -> !idx
  %hard_rows = "stablehlo.gather"(%hard, %hard_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 48>} : (tensor<128x48xf32>, !idx) -> !e
  %is_audio_b = stablehlo.broadcast_in_dim %is_audio, dims = [0] : (tensor<8xi1>) -> !mask
  %embeds = stablehlo.select %is_audio_b, %hard_rows, %text_embeds : !mask, !e
  %no_row = stablehlo.constant dense<0> : !ids
  %is_soft = stablehlo.compare GE, %row_map, %no_row, SIGNED : (!ids, !ids) -> tensor<8xi1>
  %first = stablehlo.constant dense<0> : tensor<i32>
  %last = stablehlo.constant dense<187> : tensor<i32>
  %soft_index = stablehlo.clamp %first, %row_map, %last : (tensor<i32>, !ids, tensor<i32>) -> !ids
  %soft_index_2d = stablehlo.reshape %soft_index : (!ids) -> !idx
  %soft_rows = "stablehlo.gather"(%audio, %soft_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 48>} : (tensor<188x48xf32>, !idx) -> !e
  %is_soft_b = stablehlo.broadcast_in_dim %is_soft, dims = [0] : (tensor<8xi1>) -> !mask
  %merged = stablehlo.select %is_soft_b, %soft_rows, %embeds : !mask, !e
  %position = stablehlo.iota dim = 0 : tensor<8x48xi32>
  %length_b = stablehlo.broadcast_in_dim %length, dims = [] : (tensor<i32>) -> tensor<8x48xi32>
  %live = stablehlo.compare LT, %position, %length_b, SIGNED : (tensor<8x48xi32>, tensor<8x48xi32>) -> !mask
  %zeros = stablehlo.constant dense<0.000000e+00> : !e
  %out = stablehlo.select %live, %merged, %zeros : !mask, !e
  return %out : !e
}
