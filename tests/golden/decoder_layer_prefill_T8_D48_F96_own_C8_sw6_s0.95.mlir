!s = tensor<4x8x48xf32>
!one = tensor<1x8x48xf32>
!x = tensor<8x48xf32>
func.func private @decoder_layer_prefill_T8_D48_F96_own_C8_sw6_s0.95(%streams: tensor<4x8x48xf32>, %ple: tensor<8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>, %qpos: tensor<8xi32>, %length: tensor<i32>, %slot: tensor<i32>, %cache: tensor<3x80x2x16xbf16>, %offset_k: tensor<i32>, %offset_v: tensor<i32>, %w_self_attn_q_proj: tensor<64x48xbf16>, %w_self_attn_q_norm: tensor<16xbf16>, %w_self_attn_k_proj: tensor<32x48xbf16>, %w_self_attn_v_proj: tensor<32x48xbf16>, %w_self_attn_k_norm: tensor<16xbf16>, %w_self_attn_o_proj: tensor<48x64xbf16>, %w_mlp_gate_proj: tensor<96x48xbf16>, %w_mlp_up_proj: tensor<96x48xbf16>, %w_mlp_down_proj: tensor<48x96xbf16>, %w_input_layernorm: tensor<48xbf16>, %w_post_attention_layernorm: tensor<48xbf16>, %w_pre_feedforward_layernorm: tensor<48xbf16>, %w_post_feedforward_layernorm: tensor<48xbf16>, %w_altup_correct_output_scale: tensor<48xbf16>, %w_altup_correction_coefs: tensor<4x4xbf16>, %w_altup_prediction_coefs: tensor<16x4xbf16>, %w_altup_modality_router: tensor<4x48xbf16>, %w_altup_router_norm: tensor<48xbf16>, %w_laurel_linear_left: tensor<4x48xbf16>, %w_laurel_linear_right: tensor<48x4xbf16>, %w_laurel_post_laurel_norm: tensor<48xbf16>, %w_per_layer_input_gate: tensor<16x48xbf16>, %w_per_layer_projection: tensor<48x16xbf16>, %w_post_per_layer_input_norm: tensor<48xbf16>) -> (tensor<4x8x48xf32>, tensor<3x80x2x16xbf16>, tensor<8x2x16xf32>, tensor<8x2x16xf32>) {
  %predictions = func.call @altup_predict_T8_D48_N4_A0_clip42f00000(%streams, %w_altup_router_norm, %w_altup_modality_router, %w_altup_prediction_coefs) : (tensor<4x8x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>, tensor<16x4xbf16>) -> (tensor<4x8x48xf32>)
  %active_3d = "stablehlo.slice"(%predictions) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 8, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %active = stablehlo.reshape %active_3d : (!one) -> !x
  %xn = func.call @mlx_rms_norm_R8_D48(%active, %w_input_layernorm) : (tensor<8x48xf32>, tensor<48xbf16>) -> (tensor<8x48xf32>)
  %lau = func.call @laurel_T8_D48_R4(%xn, %w_laurel_linear_left, %w_laurel_linear_right, %w_laurel_post_laurel_norm) : (tensor<8x48xf32>, tensor<4x48xbf16>, tensor<48x4xbf16>, tensor<48xbf16>) -> (tensor<8x48xf32>)
  %q = func.call @query_projection_T8_D48_H4_hd16(%xn, %w_self_attn_q_proj, %w_self_attn_q_norm, %cos, %sin) : (tensor<8x48xf32>, tensor<64x48xbf16>, tensor<16xbf16>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x4x16xf32>)
%kv:2 = func.call @key_value_projection_T8_D48_K2_hd16(%xn, %w_self_attn_k_proj, %w_self_attn_v_proj, %w_self_attn_k_norm, %cos, %sin) : (tensor<8x48xf32>, tensor<32x48xbf16>, tensor<32x48xbf16>, tensor<16xbf16>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x2x16xf32>, tensor<8x2x16xf32>)
  %k_store = stablehlo.convert %kv#0 : (tensor<8x2x16xf32>) -> tensor<8x2x16xbf16>
  %k_r = stablehlo.iota dim = 0 : tensor<6xi32>
  %k_one = stablehlo.constant dense<1> : tensor<i32>
  %k_last = stablehlo.subtract %length, %k_one : tensor<i32>
  %k_last_b = stablehlo.broadcast_in_dim %k_last, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %k_w = stablehlo.constant dense<6> : tensor<6xi32>
  %k_back = stablehlo.subtract %k_last_b, %k_r : tensor<6xi32>
  %k_back_w = stablehlo.add %k_back, %k_w : tensor<6xi32>
  %k_offset = stablehlo.remainder %k_back_w, %k_w : tensor<6xi32>
  %k_position = stablehlo.subtract %k_last_b, %k_offset : tensor<6xi32>
  %k_zero_r = stablehlo.constant dense<0> : tensor<6xi32>
  %k_held = stablehlo.compare GE, %k_position, %k_zero_r, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %k_index = stablehlo.maximum %k_position, %k_zero_r : tensor<6xi32>
  %k_index_2d = stablehlo.reshape %k_index : (tensor<6xi32>) -> tensor<6x1xi32>
  %k_rows = "stablehlo.gather"(%k_store, %k_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 16>} : (tensor<8x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
%k_slot_rows = stablehlo.constant dense<80> : tensor<i32>
  %k_slot_start = stablehlo.multiply %slot, %k_slot_rows : tensor<i32>
  %k_start = stablehlo.add %k_slot_start, %offset_k : tensor<i32>
  %k_start_b = stablehlo.broadcast_in_dim %k_start, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %k_step = stablehlo.iota dim = 0 : tensor<6xi32>
  %k_at_r = stablehlo.add %k_start_b, %k_step : tensor<6xi32>
  %k_at = stablehlo.reshape %k_at_r : (tensor<6xi32>) -> tensor<6x1xi32>
  %k_flat = stablehlo.reshape %cache : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %k_old = "stablehlo.gather"(%k_flat, %k_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 2, 16>} : (tensor<240x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
  %k_held_b = stablehlo.broadcast_in_dim %k_held, dims = [0] : (tensor<6xi1>) -> tensor<6x2x16xi1>
  %k_block = stablehlo.select %k_held_b, %k_rows, %k_old : tensor<6x2x16xi1>, tensor<6x2x16xbf16>
%k_written = "stablehlo.scatter"(%k_flat, %k_at, %k_block) ({
  ^bb0(%k_was: tensor<bf16>, %k_is: tensor<bf16>):
    stablehlo.return %k_is : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = true, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<6x1xi32>, tensor<6x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache_k_written = stablehlo.reshape %k_written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %v_store = stablehlo.convert %kv#1 : (tensor<8x2x16xf32>) -> tensor<8x2x16xbf16>
  %v_r = stablehlo.iota dim = 0 : tensor<6xi32>
  %v_one = stablehlo.constant dense<1> : tensor<i32>
  %v_last = stablehlo.subtract %length, %v_one : tensor<i32>
  %v_last_b = stablehlo.broadcast_in_dim %v_last, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %v_w = stablehlo.constant dense<6> : tensor<6xi32>
  %v_back = stablehlo.subtract %v_last_b, %v_r : tensor<6xi32>
  %v_back_w = stablehlo.add %v_back, %v_w : tensor<6xi32>
  %v_offset = stablehlo.remainder %v_back_w, %v_w : tensor<6xi32>
  %v_position = stablehlo.subtract %v_last_b, %v_offset : tensor<6xi32>
  %v_zero_r = stablehlo.constant dense<0> : tensor<6xi32>
  %v_held = stablehlo.compare GE, %v_position, %v_zero_r, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %v_index = stablehlo.maximum %v_position, %v_zero_r : tensor<6xi32>
  %v_index_2d = stablehlo.reshape %v_index : (tensor<6xi32>) -> tensor<6x1xi32>
  %v_rows = "stablehlo.gather"(%v_store, %v_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 16>} : (tensor<8x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
%v_slot_rows = stablehlo.constant dense<80> : tensor<i32>
  %v_slot_start = stablehlo.multiply %slot, %v_slot_rows : tensor<i32>
  %v_start = stablehlo.add %v_slot_start, %offset_v : tensor<i32>
  %v_start_b = stablehlo.broadcast_in_dim %v_start, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %v_step = stablehlo.iota dim = 0 : tensor<6xi32>
  %v_at_r = stablehlo.add %v_start_b, %v_step : tensor<6xi32>
  %v_at = stablehlo.reshape %v_at_r : (tensor<6xi32>) -> tensor<6x1xi32>
  %v_flat = stablehlo.reshape %cache_k_written : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %v_old = "stablehlo.gather"(%v_flat, %v_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 2, 16>} : (tensor<240x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
  %v_held_b = stablehlo.broadcast_in_dim %v_held, dims = [0] : (tensor<6xi1>) -> tensor<6x2x16xi1>
  %v_block = stablehlo.select %v_held_b, %v_rows, %v_old : tensor<6x2x16xi1>, tensor<6x2x16xbf16>
%v_written = "stablehlo.scatter"(%v_flat, %v_at, %v_block) ({
  ^bb0(%v_was: tensor<bf16>, %v_is: tensor<bf16>):
    stablehlo.return %v_is : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = true, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<6x1xi32>, tensor<6x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache_out = stablehlo.reshape %v_written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %attended = func.call @decoder_attention_prefill_T8_C8_H4_K2_hd16_sw6_ring6(%q, %kv#0, %kv#1, %qpos) : (tensor<8x4x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<8xi32>) -> (tensor<8x4x16xf32>)
  %h = func.call @attention_residual_T8_D48_Q64(%active, %attended, %w_self_attn_o_proj, %w_post_attention_layernorm, %lau) : (tensor<8x48xf32>, tensor<8x4x16xf32>, tensor<48x64xbf16>, tensor<48xbf16>, tensor<8x48xf32>) -> (tensor<8x48xf32>)
  %mlp_out = func.call @decoder_mlp_T8_D48_F96_s0.95(%h, %w_pre_feedforward_layernorm, %w_mlp_gate_proj, %w_mlp_up_proj, %w_mlp_down_proj, %w_post_feedforward_layernorm) : (tensor<8x48xf32>, tensor<48xbf16>, tensor<96x48xbf16>, tensor<96x48xbf16>, tensor<48x96xbf16>, tensor<48xbf16>) -> (tensor<8x48xf32>)
  %corrected = func.call @altup_correct_T8_D48_N4_A0_clip42f00000(%predictions, %mlp_out, %w_altup_router_norm, %w_altup_modality_router, %w_altup_correction_coefs) : (tensor<4x8x48xf32>, tensor<8x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>, tensor<4x4xbf16>) -> (tensor<4x8x48xf32>)
  %out = func.call @ple_gate_T8_D48_N4_P16_A0_scaled(%corrected, %ple, %w_altup_correct_output_scale, %w_per_layer_input_gate, %w_per_layer_projection, %w_post_per_layer_input_norm) : (tensor<4x8x48xf32>, tensor<8x16xf32>, tensor<48xbf16>, tensor<16x48xbf16>, tensor<48x16xbf16>, tensor<48xbf16>) -> (tensor<4x8x48xf32>)
  return %out, %cache_out, %kv#0, %kv#1 : tensor<4x8x48xf32>, tensor<3x80x2x16xbf16>, tensor<8x2x16xf32>, tensor<8x2x16xf32>
}
