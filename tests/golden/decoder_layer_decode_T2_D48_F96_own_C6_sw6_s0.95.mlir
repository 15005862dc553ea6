!s = tensor<4x2x48xf32>
!one = tensor<1x2x48xf32>
!x = tensor<2x48xf32>
func.func private @decoder_layer_decode_T2_D48_F96_own_C6_sw6_s0.95(%streams: tensor<4x2x48xf32>, %ple: tensor<2x16xf32>, %cos: tensor<2x16xf32>, %sin: tensor<2x16xf32>, %qpos: tensor<2xi32>, %cache: tensor<3x80x2x16xbf16>, %k_at: tensor<2x1xi32>, %v_at: tensor<2x1xi32>, %k_write: tensor<2x1xi32>, %v_write: tensor<2x1xi32>, %w_self_attn_q_proj: tensor<64x48xbf16>, %w_self_attn_q_norm: tensor<16xbf16>, %w_self_attn_k_proj: tensor<32x48xbf16>, %w_self_attn_v_proj: tensor<32x48xbf16>, %w_self_attn_k_norm: tensor<16xbf16>, %w_self_attn_o_proj: tensor<48x64xbf16>, %w_mlp_gate_proj: tensor<96x48xbf16>, %w_mlp_up_proj: tensor<96x48xbf16>, %w_mlp_down_proj: tensor<48x96xbf16>, %w_input_layernorm: tensor<48xbf16>, %w_post_attention_layernorm: tensor<48xbf16>, %w_pre_feedforward_layernorm: tensor<48xbf16>, %w_post_feedforward_layernorm: tensor<48xbf16>, %w_altup_correct_output_scale: tensor<48xbf16>, %w_altup_correction_coefs: tensor<4x4xbf16>, %w_altup_prediction_coefs: tensor<16x4xbf16>, %w_altup_modality_router: tensor<4x48xbf16>, %w_altup_router_norm: tensor<48xbf16>, %w_laurel_linear_left: tensor<4x48xbf16>, %w_laurel_linear_right: tensor<48x4xbf16>, %w_laurel_post_laurel_norm: tensor<48xbf16>, %w_per_layer_input_gate: tensor<16x48xbf16>, %w_per_layer_projection: tensor<48x16xbf16>, %w_post_per_layer_input_norm: tensor<48xbf16>) -> (tensor<4x2x48xf32>, tensor<3x80x2x16xbf16>) {
  %predictions = func.call @altup_predict_T2_D48_N4_A0_clip42f00000(%streams, %w_altup_router_norm, %w_altup_modality_router, %w_altup_prediction_coefs) : (tensor<4x2x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>, tensor<16x4xbf16>) -> (tensor<4x2x48xf32>)
  %active_3d = "stablehlo.slice"(%predictions) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 2, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %active = stablehlo.reshape %active_3d : (!one) -> !x
  %xn = func.call @mlx_rms_norm_R2_D48(%active, %w_input_layernorm) : (tensor<2x48xf32>, tensor<48xbf16>) -> (tensor<2x48xf32>)
  %lau = func.call @laurel_T2_D48_R4(%xn, %w_laurel_linear_left, %w_laurel_linear_right, %w_laurel_post_laurel_norm) : (tensor<2x48xf32>, tensor<4x48xbf16>, tensor<48x4xbf16>, tensor<48xbf16>) -> (tensor<2x48xf32>)
  %q = func.call @query_projection_T2_D48_H4_hd16(%xn, %w_self_attn_q_proj, %w_self_attn_q_norm, %cos, %sin) : (tensor<2x48xf32>, tensor<64x48xbf16>, tensor<16xbf16>, tensor<2x16xf32>, tensor<2x16xf32>) -> (tensor<2x4x16xf32>)
  %kv:2 = func.call @key_value_projection_T2_D48_K2_hd16(%xn, %w_self_attn_k_proj, %w_self_attn_v_proj, %w_self_attn_k_norm, %cos, %sin) : (tensor<2x48xf32>, tensor<32x48xbf16>, tensor<32x48xbf16>, tensor<16xbf16>, tensor<2x16xf32>, tensor<2x16xf32>) -> (tensor<2x2x16xf32>, tensor<2x2x16xf32>)
  %cache_rows = stablehlo.reshape %cache : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %k_store = stablehlo.convert %kv#0 : (tensor<2x2x16xf32>) -> tensor<2x2x16xbf16>
  %k_written = "stablehlo.scatter"(%cache_rows, %k_write, %k_store) ({
  ^bb0(%k_old: tensor<bf16>, %k_new: tensor<bf16>):
    stablehlo.return %k_new : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<2x1xi32>, tensor<2x2x16xbf16>) -> tensor<240x2x16xbf16>
  %v_store = stablehlo.convert %kv#1 : (tensor<2x2x16xf32>) -> tensor<2x2x16xbf16>
  %written = "stablehlo.scatter"(%k_written, %v_write, %v_store) ({
  ^bb0(%v_old: tensor<bf16>, %v_new: tensor<bf16>):
    stablehlo.return %v_new : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<2x1xi32>, tensor<2x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache_out = stablehlo.reshape %written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %k_slot_rows = "stablehlo.gather"(%written, %k_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2, 3], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 6, 2, 16>} : (tensor<240x2x16xbf16>, tensor<2x1xi32>) -> tensor<2x6x2x16xbf16>
  %k_columns = stablehlo.convert %k_slot_rows : (tensor<2x6x2x16xbf16>) -> tensor<2x6x2x16xf32>
  %v_slot_rows = "stablehlo.gather"(%written, %v_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2, 3], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 6, 2, 16>} : (tensor<240x2x16xbf16>, tensor<2x1xi32>) -> tensor<2x6x2x16xbf16>
  %v_columns = stablehlo.convert %v_slot_rows : (tensor<2x6x2x16xbf16>) -> tensor<2x6x2x16xf32>
  %attended = func.call @decoder_attention_decode_T2_C6_H4_K2_hd16_sw6(%q, %k_columns, %v_columns, %qpos) : (tensor<2x4x16xf32>, tensor<2x6x2x16xf32>, tensor<2x6x2x16xf32>, tensor<2xi32>) -> (tensor<2x4x16xf32>)
  %h = func.call @attention_residual_T2_D48_Q64(%active, %attended, %w_self_attn_o_proj, %w_post_attention_layernorm, %lau) : (tensor<2x48xf32>, tensor<2x4x16xf32>, tensor<48x64xbf16>, tensor<48xbf16>, tensor<2x48xf32>) -> (tensor<2x48xf32>)
  %mlp_out = func.call @decoder_mlp_T2_D48_F96_s0.95(%h, %w_pre_feedforward_layernorm, %w_mlp_gate_proj, %w_mlp_up_proj, %w_mlp_down_proj, %w_post_feedforward_layernorm) : (tensor<2x48xf32>, tensor<48xbf16>, tensor<96x48xbf16>, tensor<96x48xbf16>, tensor<48x96xbf16>, tensor<48xbf16>) -> (tensor<2x48xf32>)
  %corrected = func.call @altup_correct_T2_D48_N4_A0_clip42f00000(%predictions, %mlp_out, %w_altup_router_norm, %w_altup_modality_router, %w_altup_correction_coefs) : (tensor<4x2x48xf32>, tensor<2x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>, tensor<4x4xbf16>) -> (tensor<4x2x48xf32>)
  %out = func.call @ple_gate_T2_D48_N4_P16_A0_scaled(%corrected, %ple, %w_altup_correct_output_scale, %w_per_layer_input_gate, %w_per_layer_projection, %w_post_per_layer_input_norm) : (tensor<4x2x48xf32>, tensor<2x16xf32>, tensor<48xbf16>, tensor<16x48xbf16>, tensor<48x16xbf16>, tensor<48xbf16>) -> (tensor<4x2x48xf32>)
  return %out, %cache_out : tensor<4x2x48xf32>, tensor<3x80x2x16xbf16>
}
