!l = tensor<1x262400xf32>
func.func private @decoder_head_T1_D48_N4_V262400_cap30(%streams: tensor<4x1x48xf32>, %w0: tensor<48x48xbf16>, %w1: tensor<48x48xbf16>, %w2: tensor<48x48xbf16>, %w_norm: tensor<48xbf16>, %w_embed: tensor<262400x48xbf16>) -> !l {
  %collapsed = func.call @altup_collapse_T1_D48_N4(%streams, %w0, %w1, %w2) : (tensor<4x1x48xf32>, tensor<48x48xbf16>, tensor<48x48xbf16>, tensor<48x48xbf16>) -> (tensor<1x48xf32>)
  %y = func.call @mlx_rms_norm_R1_D48(%collapsed, %w_norm) : (tensor<1x48xf32>, tensor<48xbf16>) -> (tensor<1x48xf32>)
  %logits = func.call @linear_1_K48_N262400_Ibf16(%y, %w_embed) : (tensor<1x48xf32>, tensor<262400x48xbf16>) -> (tensor<1x262400xf32>)
  %cap_s = stablehlo.constant dense<0x41F00000> : tensor<f32>
  %cap = stablehlo.broadcast_in_dim %cap_s, dims = [] : (tensor<f32>) -> tensor<1x262400xf32>
  %divided_raw_a64 = stablehlo.convert %logits : (tensor<1x262400xf32>) -> tensor<1x262400xf64>
  %divided_raw_b64 = stablehlo.convert %cap : (tensor<1x262400xf32>) -> tensor<1x262400xf64>
  %divided_raw_64 = stablehlo.divide %divided_raw_a64, %divided_raw_b64 : tensor<1x262400xf64>
  %divided_raw = stablehlo.convert %divided_raw_64 : (tensor<1x262400xf64>) -> tensor<1x262400xf32>
  %divided = stablehlo.reduce_precision %divided_raw, format = e8m7 : !l
  %tanh_raw = stablehlo.tanh %divided : !l
  %tanh = stablehlo.reduce_precision %tanh_raw, format = e8m7 : !l
  %capped_raw = stablehlo.multiply %tanh, %cap : !l
  %out = stablehlo.reduce_precision %capped_raw, format = e8m7 : !l
  return %out : !l
}
