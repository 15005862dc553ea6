!e = tensor<2x48xf32>
func.func private @decoder_embedding_T2_D48_L10_P16(%text_rows: tensor<2x48xbf16>, %ple_rows: tensor<2x160xbf16>, %w_proj: tensor<160x48xbf16>, %w_norm: tensor<16xbf16>) -> (!e, tensor<2x10x16xf32>) {
  %text = stablehlo.convert %text_rows : (tensor<2x48xbf16>) -> !e
  %scale_s = stablehlo.constant dense<0x40DE0000> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %scale_s, dims = [] : (tensor<f32>) -> tensor<2x48xf32>
  %scaled = stablehlo.multiply %text, %scale : !e
  %embeds = stablehlo.reduce_precision %scaled, format = e8m7 : !e
  %live = stablehlo.constant dense<2> : tensor<i32>
  %ple:2 = func.call @dense_ple_C2_H48_L10_P16(%embeds, %ple_rows, %w_proj, %w_norm, %live) : (tensor<2x48xf32>, tensor<2x160xbf16>, tensor<160x48xbf16>, tensor<16xbf16>, tensor<i32>) -> (tensor<2x10x16xf32>, tensor<2x160xf32>)
  return %embeds, %ple#0 : !e, tensor<2x10x16xf32>
}
