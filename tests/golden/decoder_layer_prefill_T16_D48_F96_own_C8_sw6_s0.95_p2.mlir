!s = tensor<4x16x48xf32>
!one = tensor<1x16x48xf32>
!x = tensor<16x48xf32>
func.func private @decoder_layer_prefill_T16_D48_F96_own_C8_sw6_s0.95_p2(%streams: tensor<4x16x48xf32>, %ple: tensor<16x16xf32>, %cos: tensor<16x16xf32>, %sin: tensor<16x16xf32>, %qpos: tensor<8xi32>, %length: tensor<2xi32>, %slot: tensor<2xi32>, %cache: tensor<3x80x2x16xbf16>, %offset_k: tensor<i32>, %offset_v: tensor<i32>, %w_self_attn_q_proj: tensor<64x48xbf16>, %w_self_attn_q_norm: tensor<16xbf16>, %w_self_attn_k_proj: tensor<32x48xbf16>, %w_self_attn_v_proj: tensor<32x48xbf16>, %w_self_attn_k_norm: tensor<16xbf16>, %w_self_attn_o_proj: tensor<48x64xbf16>, %w_mlp_gate_proj: tensor<96x48xbf16>, %w_mlp_up_proj: tensor<96x48xbf16>, %w_mlp_down_proj: tensor<48x96xbf16>, %w_input_layernorm: tensor<48xbf16>, %w_post_attention_layernorm: tensor<48xbf16>, %w_pre_feedforward_layernorm: tensor<48xbf16>, %w_post_feedforward_layernorm: tensor<48xbf16>, %w_altup_correct_output_scale: tensor<48xbf16>, %w_altup_correction_coefs: tensor<4x4xbf16>, %w_altup_prediction_coefs: tensor<16x4xbf16>, %w_altup_modality_router: tensor<4x48xbf16>, %w_altup_router_norm: tensor<48xbf16>, %w_laurel_linear_left: tensor<4x48xbf16>, %w_laurel_linear_right: tensor<48x4xbf16>, %w_laurel_post_laurel_norm: tensor<48xbf16>, %w_per_layer_input_gate: tensor<16x48xbf16>, %w_per_layer_projection: tensor<48x16xbf16>, %w_post_per_layer_input_norm: tensor<48xbf16>) -> (tensor<4x16x48xf32>, tensor<3x80x2x16xbf16>, tensor<16x2x16xf32>, tensor<16x2x16xf32>) {
  %predictions = func.call @altup_predict_T16_D48_N4_A0_clip42f00000(%streams, %w_altup_router_norm, %w_altup_modality_router, %w_altup_prediction_coefs) : (tensor<4x16x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>, tensor<16x4xbf16>) -> (tensor<4x16x48xf32>)
  %active_3d = "stablehlo.slice"(%predictions) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 16, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %active = stablehlo.reshape %active_3d : (!one) -> !x
  %xn = func.call @mlx_rms_norm_R16_D48(%active, %w_input_layernorm) : (tensor<16x48xf32>, tensor<48xbf16>) -> (tensor<16x48xf32>)
  %lau = func.call @laurel_T16_D48_R4(%xn, %w_laurel_linear_left, %w_laurel_linear_right, %w_laurel_post_laurel_norm) : (tensor<16x48xf32>, tensor<4x48xbf16>, tensor<48x4xbf16>, tensor<48xbf16>) -> (tensor<16x48xf32>)
  %q = func.call @query_projection_T16_D48_H4_hd16(%xn, %w_self_attn_q_proj, %w_self_attn_q_norm, %cos, %sin) : (tensor<16x48xf32>, tensor<64x48xbf16>, tensor<16xbf16>, tensor<16x16xf32>, tensor<16x16xf32>) -> (tensor<16x4x16xf32>)
  %kv:2 = func.call @key_value_projection_T16_D48_K2_hd16(%xn, %w_self_attn_k_proj, %w_self_attn_v_proj, %w_self_attn_k_norm, %cos, %sin) : (tensor<16x48xf32>, tensor<32x48xbf16>, tensor<32x48xbf16>, tensor<16xbf16>, tensor<16x16xf32>, tensor<16x16xf32>) -> (tensor<16x2x16xf32>, tensor<16x2x16xf32>)
  %slot0_1 = "stablehlo.slice"(%slot) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
  %slot0 = stablehlo.reshape %slot0_1 : (tensor<1xi32>) -> tensor<i32>
  %length0_1 = "stablehlo.slice"(%length) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
  %length0 = stablehlo.reshape %length0_1 : (tensor<1xi32>) -> tensor<i32>
  %k0_f32 = "stablehlo.slice"(%kv#0) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 16>, strides = array<i64: 1, 1, 1>} : (tensor<16x2x16xf32>) -> tensor<8x2x16xf32>
  %k0_store = stablehlo.convert %k0_f32 : (tensor<8x2x16xf32>) -> tensor<8x2x16xbf16>
  %v0_f32 = "stablehlo.slice"(%kv#1) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 16>, strides = array<i64: 1, 1, 1>} : (tensor<16x2x16xf32>) -> tensor<8x2x16xf32>
  %v0_store = stablehlo.convert %v0_f32 : (tensor<8x2x16xf32>) -> tensor<8x2x16xbf16>
  %k0_r = stablehlo.iota dim = 0 : tensor<6xi32>
  %k0_one = stablehlo.constant dense<1> : tensor<i32>
  %k0_last = stablehlo.subtract %length0, %k0_one : tensor<i32>
  %k0_last_b = stablehlo.broadcast_in_dim %k0_last, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %k0_w = stablehlo.constant dense<6> : tensor<6xi32>
  %k0_back = stablehlo.subtract %k0_last_b, %k0_r : tensor<6xi32>
  %k0_back_w = stablehlo.add %k0_back, %k0_w : tensor<6xi32>
  %k0_offset = stablehlo.remainder %k0_back_w, %k0_w : tensor<6xi32>
  %k0_position = stablehlo.subtract %k0_last_b, %k0_offset : tensor<6xi32>
  %k0_zero_r = stablehlo.constant dense<0> : tensor<6xi32>
  %k0_held = stablehlo.compare GE, %k0_position, %k0_zero_r, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %k0_index = stablehlo.maximum %k0_position, %k0_zero_r : tensor<6xi32>
  %k0_index_2d = stablehlo.reshape %k0_index : (tensor<6xi32>) -> tensor<6x1xi32>
  %k0_rows = "stablehlo.gather"(%k0_store, %k0_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 16>} : (tensor<8x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
%k0_slot_rows = stablehlo.constant dense<80> : tensor<i32>
  %k0_slot_start = stablehlo.multiply %slot0, %k0_slot_rows : tensor<i32>
  %k0_start = stablehlo.add %k0_slot_start, %offset_k : tensor<i32>
  %k0_start_b = stablehlo.broadcast_in_dim %k0_start, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %k0_step = stablehlo.iota dim = 0 : tensor<6xi32>
  %k0_at_r = stablehlo.add %k0_start_b, %k0_step : tensor<6xi32>
  %k0_at = stablehlo.reshape %k0_at_r : (tensor<6xi32>) -> tensor<6x1xi32>
  %k0_flat = stablehlo.reshape %cache : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %k0_old = "stablehlo.gather"(%k0_flat, %k0_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 2, 16>} : (tensor<240x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
  %k0_held_b = stablehlo.broadcast_in_dim %k0_held, dims = [0] : (tensor<6xi1>) -> tensor<6x2x16xi1>
  %k0_block = stablehlo.select %k0_held_b, %k0_rows, %k0_old : tensor<6x2x16xi1>, tensor<6x2x16xbf16>
%k0_written = "stablehlo.scatter"(%k0_flat, %k0_at, %k0_block) ({
  ^bb0(%k0_was: tensor<bf16>, %k0_is: tensor<bf16>):
    stablehlo.return %k0_is : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = true, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<6x1xi32>, tensor<6x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache0_k = stablehlo.reshape %k0_written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %v0_r = stablehlo.iota dim = 0 : tensor<6xi32>
  %v0_one = stablehlo.constant dense<1> : tensor<i32>
  %v0_last = stablehlo.subtract %length0, %v0_one : tensor<i32>
  %v0_last_b = stablehlo.broadcast_in_dim %v0_last, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %v0_w = stablehlo.constant dense<6> : tensor<6xi32>
  %v0_back = stablehlo.subtract %v0_last_b, %v0_r : tensor<6xi32>
  %v0_back_w = stablehlo.add %v0_back, %v0_w : tensor<6xi32>
  %v0_offset = stablehlo.remainder %v0_back_w, %v0_w : tensor<6xi32>
  %v0_position = stablehlo.subtract %v0_last_b, %v0_offset : tensor<6xi32>
  %v0_zero_r = stablehlo.constant dense<0> : tensor<6xi32>
  %v0_held = stablehlo.compare GE, %v0_position, %v0_zero_r, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %v0_index = stablehlo.maximum %v0_position, %v0_zero_r : tensor<6xi32>
  %v0_index_2d = stablehlo.reshape %v0_index : (tensor<6xi32>) -> tensor<6x1xi32>
  %v0_rows = "stablehlo.gather"(%v0_store, %v0_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 16>} : (tensor<8x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
%v0_slot_rows = stablehlo.constant dense<80> : tensor<i32>
  %v0_slot_start = stablehlo.multiply %slot0, %v0_slot_rows : tensor<i32>
  %v0_start = stablehlo.add %v0_slot_start, %offset_v : tensor<i32>
  %v0_start_b = stablehlo.broadcast_in_dim %v0_start, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %v0_step = stablehlo.iota dim = 0 : tensor<6xi32>
  %v0_at_r = stablehlo.add %v0_start_b, %v0_step : tensor<6xi32>
  %v0_at = stablehlo.reshape %v0_at_r : (tensor<6xi32>) -> tensor<6x1xi32>
  %v0_flat = stablehlo.reshape %cache0_k : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %v0_old = "stablehlo.gather"(%v0_flat, %v0_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 2, 16>} : (tensor<240x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
  %v0_held_b = stablehlo.broadcast_in_dim %v0_held, dims = [0] : (tensor<6xi1>) -> tensor<6x2x16xi1>
  %v0_block = stablehlo.select %v0_held_b, %v0_rows, %v0_old : tensor<6x2x16xi1>, tensor<6x2x16xbf16>
%v0_written = "stablehlo.scatter"(%v0_flat, %v0_at, %v0_block) ({
  ^bb0(%v0_was: tensor<bf16>, %v0_is: tensor<bf16>):
    stablehlo.return %v0_is : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = true, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<6x1xi32>, tensor<6x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache0_v = stablehlo.reshape %v0_written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %q0 = "stablehlo.slice"(%q) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 4, 16>, strides = array<i64: 1, 1, 1>} : (tensor<16x4x16xf32>) -> tensor<8x4x16xf32>
  %attended0 = func.call @decoder_attention_prefill_T8_C8_H4_K2_hd16_sw6_ring6(%q0, %k0_f32, %v0_f32, %qpos) : (tensor<8x4x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<8xi32>) -> (tensor<8x4x16xf32>)
  %slot1_1 = "stablehlo.slice"(%slot) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
  %slot1 = stablehlo.reshape %slot1_1 : (tensor<1xi32>) -> tensor<i32>
  %length1_1 = "stablehlo.slice"(%length) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
  %length1 = stablehlo.reshape %length1_1 : (tensor<1xi32>) -> tensor<i32>
  %k1_f32 = "stablehlo.slice"(%kv#0) {start_indices = array<i64: 8, 0, 0>, limit_indices = array<i64: 16, 2, 16>, strides = array<i64: 1, 1, 1>} : (tensor<16x2x16xf32>) -> tensor<8x2x16xf32>
  %k1_store = stablehlo.convert %k1_f32 : (tensor<8x2x16xf32>) -> tensor<8x2x16xbf16>
  %v1_f32 = "stablehlo.slice"(%kv#1) {start_indices = array<i64: 8, 0, 0>, limit_indices = array<i64: 16, 2, 16>, strides = array<i64: 1, 1, 1>} : (tensor<16x2x16xf32>) -> tensor<8x2x16xf32>
  %v1_store = stablehlo.convert %v1_f32 : (tensor<8x2x16xf32>) -> tensor<8x2x16xbf16>
  %k1_r = stablehlo.iota dim = 0 : tensor<6xi32>
  %k1_one = stablehlo.constant dense<1> : tensor<i32>
  %k1_last = stablehlo.subtract %length1, %k1_one : tensor<i32>
  %k1_last_b = stablehlo.broadcast_in_dim %k1_last, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %k1_w = stablehlo.constant dense<6> : tensor<6xi32>
  %k1_back = stablehlo.subtract %k1_last_b, %k1_r : tensor<6xi32>
  %k1_back_w = stablehlo.add %k1_back, %k1_w : tensor<6xi32>
  %k1_offset = stablehlo.remainder %k1_back_w, %k1_w : tensor<6xi32>
  %k1_position = stablehlo.subtract %k1_last_b, %k1_offset : tensor<6xi32>
  %k1_zero_r = stablehlo.constant dense<0> : tensor<6xi32>
  %k1_held = stablehlo.compare GE, %k1_position, %k1_zero_r, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %k1_index = stablehlo.maximum %k1_position, %k1_zero_r : tensor<6xi32>
  %k1_index_2d = stablehlo.reshape %k1_index : (tensor<6xi32>) -> tensor<6x1xi32>
  %k1_rows = "stablehlo.gather"(%k1_store, %k1_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 16>} : (tensor<8x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
%k1_slot_rows = stablehlo.constant dense<80> : tensor<i32>
  %k1_slot_start = stablehlo.multiply %slot1, %k1_slot_rows : tensor<i32>
  %k1_start = stablehlo.add %k1_slot_start, %offset_k : tensor<i32>
  %k1_start_b = stablehlo.broadcast_in_dim %k1_start, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %k1_step = stablehlo.iota dim = 0 : tensor<6xi32>
  %k1_at_r = stablehlo.add %k1_start_b, %k1_step : tensor<6xi32>
  %k1_at = stablehlo.reshape %k1_at_r : (tensor<6xi32>) -> tensor<6x1xi32>
  %k1_flat = stablehlo.reshape %cache0_v : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %k1_old = "stablehlo.gather"(%k1_flat, %k1_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 2, 16>} : (tensor<240x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
  %k1_held_b = stablehlo.broadcast_in_dim %k1_held, dims = [0] : (tensor<6xi1>) -> tensor<6x2x16xi1>
  %k1_block = stablehlo.select %k1_held_b, %k1_rows, %k1_old : tensor<6x2x16xi1>, tensor<6x2x16xbf16>
%k1_written = "stablehlo.scatter"(%k1_flat, %k1_at, %k1_block) ({
  ^bb0(%k1_was: tensor<bf16>, %k1_is: tensor<bf16>):
    stablehlo.return %k1_is : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = true, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<6x1xi32>, tensor<6x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache1_k = stablehlo.reshape %k1_written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %v1_r = stablehlo.iota dim = 0 : tensor<6xi32>
  %v1_one = stablehlo.constant dense<1> : tensor<i32>
  %v1_last = stablehlo.subtract %length1, %v1_one : tensor<i32>
  %v1_last_b = stablehlo.broadcast_in_dim %v1_last, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %v1_w = stablehlo.constant dense<6> : tensor<6xi32>
  %v1_back = stablehlo.subtract %v1_last_b, %v1_r : tensor<6xi32>
  %v1_back_w = stablehlo.add %v1_back, %v1_w : tensor<6xi32>
  %v1_offset = stablehlo.remainder %v1_back_w, %v1_w : tensor<6xi32>
  %v1_position = stablehlo.subtract %v1_last_b, %v1_offset : tensor<6xi32>
  %v1_zero_r = stablehlo.constant dense<0> : tensor<6xi32>
  %v1_held = stablehlo.compare GE, %v1_position, %v1_zero_r, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %v1_index = stablehlo.maximum %v1_position, %v1_zero_r : tensor<6xi32>
  %v1_index_2d = stablehlo.reshape %v1_index : (tensor<6xi32>) -> tensor<6x1xi32>
  %v1_rows = "stablehlo.gather"(%v1_store, %v1_index_2d) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 16>} : (tensor<8x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
%v1_slot_rows = stablehlo.constant dense<80> : tensor<i32>
  %v1_slot_start = stablehlo.multiply %slot1, %v1_slot_rows : tensor<i32>
  %v1_start = stablehlo.add %v1_slot_start, %offset_v : tensor<i32>
  %v1_start_b = stablehlo.broadcast_in_dim %v1_start, dims = [] : (tensor<i32>) -> tensor<6xi32>
  %v1_step = stablehlo.iota dim = 0 : tensor<6xi32>
  %v1_at_r = stablehlo.add %v1_start_b, %v1_step : tensor<6xi32>
  %v1_at = stablehlo.reshape %v1_at_r : (tensor<6xi32>) -> tensor<6x1xi32>
  %v1_flat = stablehlo.reshape %cache1_k : (tensor<3x80x2x16xbf16>) -> tensor<240x2x16xbf16>
  %v1_old = "stablehlo.gather"(%v1_flat, %v1_at) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 2, 16>} : (tensor<240x2x16xbf16>, tensor<6x1xi32>) -> tensor<6x2x16xbf16>
  %v1_held_b = stablehlo.broadcast_in_dim %v1_held, dims = [0] : (tensor<6xi1>) -> tensor<6x2x16xi1>
  %v1_block = stablehlo.select %v1_held_b, %v1_rows, %v1_old : tensor<6x2x16xi1>, tensor<6x2x16xbf16>
%v1_written = "stablehlo.scatter"(%v1_flat, %v1_at, %v1_block) ({
  ^bb0(%v1_was: tensor<bf16>, %v1_is: tensor<bf16>):
    stablehlo.return %v1_is : tensor<bf16>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = true, unique_indices = true} : (tensor<240x2x16xbf16>, tensor<6x1xi32>, tensor<6x2x16xbf16>) -> tensor<240x2x16xbf16>
  %cache_out = stablehlo.reshape %v1_written : (tensor<240x2x16xbf16>) -> tensor<3x80x2x16xbf16>
  %q1 = "stablehlo.slice"(%q) {start_indices = array<i64: 8, 0, 0>, limit_indices = array<i64: 16, 4, 16>, strides = array<i64: 1, 1, 1>} : (tensor<16x4x16xf32>) -> tensor<8x4x16xf32>
  %attended1 = func.call @decoder_attention_prefill_T8_C8_H4_K2_hd16_sw6_ring6(%q1, %k1_f32, %v1_f32, %qpos) : (tensor<8x4x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<8xi32>) -> (tensor<8x4x16xf32>)
  %attended = stablehlo.concatenate %attended0, %attended1, dim = 0 : (tensor<8x4x16xf32>, tensor<8x4x16xf32>) -> tensor<16x4x16xf32>
  %h = func.call @attention_residual_T16_D48_Q64(%active, %attended, %w_self_attn_o_proj, %w_post_attention_layernorm, %lau) : (tensor<16x48xf32>, tensor<16x4x16xf32>, tensor<48x64xbf16>, tensor<48xbf16>, tensor<16x48xf32>) -> (tensor<16x48xf32>)
  %mlp_out = func.call @decoder_mlp_T16_D48_F96_s0.95(%h, %w_pre_feedforward_layernorm, %w_mlp_gate_proj, %w_mlp_up_proj, %w_mlp_down_proj, %w_post_feedforward_layernorm) : (tensor<16x48xf32>, tensor<48xbf16>, tensor<96x48xbf16>, tensor<96x48xbf16>, tensor<48x96xbf16>, tensor<48xbf16>) -> (tensor<16x48xf32>)
  %corrected = func.call @altup_correct_T16_D48_N4_A0_clip42f00000(%predictions, %mlp_out, %w_altup_router_norm, %w_altup_modality_router, %w_altup_correction_coefs) : (tensor<4x16x48xf32>, tensor<16x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>, tensor<4x4xbf16>) -> (tensor<4x16x48xf32>)
  %out = func.call @ple_gate_T16_D48_N4_P16_A0_scaled(%corrected, %ple, %w_altup_correct_output_scale, %w_per_layer_input_gate, %w_per_layer_projection, %w_post_per_layer_input_norm) : (tensor<4x16x48xf32>, tensor<16x16xf32>, tensor<48xbf16>, tensor<16x48xbf16>, tensor<48x16xbf16>, tensor<48xbf16>) -> (tensor<4x16x48xf32>)
  return %out, %cache_out, %kv#0, %kv#1 : tensor<4x16x48xf32>, tensor<3x80x2x16xbf16>, tensor<16x2x16xf32>, tensor<16x2x16xf32>
}
