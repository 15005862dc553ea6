!x = tensor<1x25x64xf32>
!heads = tensor<1x25x2x32xf32>
!q_pad = tensor<1x36x2x32xf32>
!q_blk = tensor<1x3x12x2x32xf32>
!heads_op = tensor<1x25x2x32xf32>
!kv_pad = tensor<1x48x2x32xf32>
!kv_blocks = tensor<1x4x12x2x32xf32>
!kv_slice = tensor<1x3x12x2x32xf32>
!ctx = tensor<1x3x24x2x32xf32>
!win = tensor<1x3x2x24x32xf32>
!logits = tensor<1x3x2x12x24xf32>
!rel = tensor<1x3x2x12x13xf32>
!rel_pad = tensor<1x3x2x12x25xf32>
!valid = tensor<1x25xi1>
!cond = tensor<1x3x2x12x24xi1>
!rows = tensor<1x3x2x12xf32>
!wn = tensor<64xbf16>
!wm = tensor<64x64xbf16>
func.func private @attention_B1_T25_D64_H2_W12_P12_Df32(%x: !x, %valid: !valid, %pre_norm: !wn, %wq: !wm, %wk: !wm, %wv: !wm, %per_dim_scale: tensor<32xbf16>, %wpos: !wm, %wpost: !wm, %post_norm: !wn) -> !x {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %zero_op = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %normed = func.call @rms_norm_1x25_D64_scaled_clip501502f9(%x, %pre_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %q = func.call @linear_1x25_K64_N64_Ibf16_Df32(%normed, %wq) : (tensor<1x25x64xf32>, tensor<64x64xbf16>) -> (tensor<1x25x64xf32>)
  %k = func.call @linear_1x25_K64_N64_Ibf16_Df32(%normed, %wk) : (tensor<1x25x64xf32>, tensor<64x64xbf16>) -> (tensor<1x25x64xf32>)
  %v = func.call @linear_1x25_K64_N64_Ibf16_Df32(%normed, %wv) : (tensor<1x25x64xf32>, tensor<64x64xbf16>) -> (tensor<1x25x64xf32>)
  %pds = stablehlo.convert %per_dim_scale : (tensor<32xbf16>) -> tensor<32xf32>
  %pds_exp = stablehlo.exponential %pds : tensor<32xf32>
  %pds_log = stablehlo.log_plus_one %pds_exp : tensor<32xf32>
  %threshold_s = stablehlo.constant dense<0x41A00000> : tensor<f32>
  %threshold = stablehlo.broadcast_in_dim %threshold_s, dims = [] : (tensor<f32>) -> tensor<32xf32>
  %linear_region = stablehlo.compare GT, %pds, %threshold, FLOAT : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xi1>
  %softplus_raw = stablehlo.select %linear_region, %pds, %pds_log : tensor<32xi1>, tensor<32xf32>
  %softplus = stablehlo.reduce_precision %softplus_raw, format = e8m7 : tensor<32xf32>
  %q_scale_s = stablehlo.constant dense<0x3E8293EE> : tensor<f32>
  %q_scale = stablehlo.broadcast_in_dim %q_scale_s, dims = [] : (tensor<f32>) -> tensor<32xf32>
  %scale_raw = stablehlo.multiply %softplus, %q_scale : tensor<32xf32>
  %scale = stablehlo.reduce_precision %scale_raw, format = e8m7 : tensor<32xf32>
  %signal = stablehlo.constant dense<"0xD85C09BF0C98F93EA71CAB3E5C6E7ABF1A16FCBE231FD33E6BCA663FA6597F3F6BC3653FBC843C3F4FB2133F72E1E13E9E7CAA3E94887F3E4EC23E3E8D190E3EC974D33DDD3A9D3D46BC693D05B32D3DD711013D68CDBF3C11828E3CF6C2533C4C551D3C92C9E93B3FB2AD3BDF0C813B77C23F3B7A780E3B7EB3D33A4E499D3AD006583F6C855FBFC147713FB76C543E22D25EBF0F3969BF138EDDBE0CD4913D27C9E13E1E322D3FF118513F73BD653F1264713FA9E6773FCE847B3FEC857D3FBDA17E3F943E7F3F36957F3F0BC57F3F74DF7F3F09EE7F3F15F67F3F87FA7F3FFAFC7F3F55FE7F3F14FF7F3F7EFF7F3FB8FF7F3FD8FF7F3FEAFF7F3FF4FF7F3F5CFF7FBF761D733F51B356BEA4D67ABF0E8F55BEF9361B3F0614763F51167B3FC94E5A3F0C22303F9DCA083FEC39D03E5DC39C3E38A36A3EBC062F3E5253023EDDE3C13D6E26903DAE46563D643B1F3D4FA2EC3C48D2AF3C2AA2823C991D423CF138103C2E4ED63BC1389F3BA0976C3B9AC72F3B1B99023B340FC23ADD2D903A7205913B4263A0BE4D4F7A3F21974CBEED5E7ABF36944BBFDF288DBE1BA6473E25B5053FF7C6393F8663583F6CDF693F96B4733F5730793F963B7C3F0FEB7D3FA4D97E3F765D7F3F43A67F3F76CE7F3FA7E47F3FE7F07F3FABF77F3F66FB7F3F76FD7F3F99FE7F3F3AFF7F3F93FF7F3FC4FF7F3FDFFF7F3FEEFF7F3FF6FF7F3FF7440BBF954B693F6EF630BF09A551BF6175C13DB7F2443FC06B7E3F92E8723FC7F84C3FE8E8223FEF0DFB3E2045BE3EFFE98E3E54A3553E3B401F3E3111ED3D414FB03D7B10833DD8CF423D40C3103D8420D73CFBD69F3C63846D3C2E78303C911C033CC5D2C23B41BF903B8015573BBECC1F3B7873ED3AEB6AB03A6D12833A64CD56BF38CDD23EB4FC383F32EB12BFF4DA7EBFE58B23BF3E1FE3BD91A2A13EE55E193F9D79453FA51C5F3F9BAA6D3F2ED3753FD85D7A3F9FE27C3F73477E3FB20C7F3FA9797F3FD5B57F3F0FD77F3F66E97F3F86F37F3F1DF97F3F33FC7F3FE7FD7F3FD7FE7F3F5CFF7F3FA6FF7F3FCEFF7F3FE4FF7F3FF1FF7F3FF8FF7F3F3101D33ED506C93E5CAF77BF82AE05BF950DC73E9DA1643F53957F3F10F1663FCEDE3D3F6AE9143FE2DDE33EB809AC3E59F3803E488B403ECB6F0F3E9373D53D4AB79E3D50F26B3DE0572F3DA44A023D589EC13C87DB8F3C4FC4553CB7D21E3C5800EC3B5857AF3BC145823B5E93413BDFD10F3BBBB4D53AA0C69E3AF7ED6B3AD53F69BF39716B3F886E813EDA525ABF73DC6BBF2856E6BEFC9B693DC9ECDC3E74B62B3FD53B503FCA3F653F981D713F6BBF773F096F7B3FE0797D3F149B7E3FE73A7F3F2D937F3FECC37F3FD6DE7F3FB1ED7F3FE5F57F3F6CFA7F3FECFC7F3F4DFE7F3F10FF7F3F7BFF7F3FB7FF7F3FD8FF7F3FEAFF7F3FF4FF7F3FF9FF7F3F95467D3FD27DAABEC1D574BF04310EBEABB3253FC4A5783F5988793F905F573F2A222D3F9E34063FA914CC3E798E993E94C4653E765D2B3ECD2CFF3D9BCEBD3D4F1C8D3D2FC1513DE5DE1B3D3EA3E73CD61BAC3CDEBF7F3C1F043E3C332D0D3C84C7D13BE6DB9B3B7A98673B3A112C3B01AEFF3AFDF5BD3A56228D3A15B7513AF6FD14BEDB63713FA08E95BE19857DBF5F2343BF0BA773BEA2B7643E80620A3F63933C3F83005A3FD6C86A3F1C37743FE878793FCC637C3F4E017E3FEFE57E3F40647F3F03AA7F3F88D07F3FCCE57F3F89F17F3F04F87F3F98FB7F3F91FD7F3FA8FE7F3F42FF7F3F97FF7F3FC6FF7F3FE0FF7F3FEEFF7F3FF6FF7F3FFBFF7F3F4630283F1E1362BF574229BF86F6883E9D9C583FB3F97F3F8A706C3F3B72443FC3E71A3FD5B8ED3E40C2B33E3FDA863E6473493E441C163E176ADF3D1923A63D49FD763DDA8D373D0265083D75B0CA3C0699963C6EC85F3CD443263C480FF73BA78EB73B7160883B72A54A3B158F163B43B8DF3A3E37A63A18FC763A3280373ABDFF403FF437F03E8F0F40BF9FAB76BF247008BF522C63BCEA49C43E2326243F81D04B3FC4BB623F0FB46F3FFFF5763F49FF7A3F043C7D3FE1787E3F02287F3FBE887F3F29BE7F3FA8DB7F3FF0EB7F3FEDF47F3FE3F97F3FA0FC7F3F23FE7F3FF9FE7F3F6FFF7F3FB0FF7F3FD4FF7F3FE8FF7F3FF3FF7F3FF9FF7F3FFCFF7F3F8C0F8FBE4DBF77BF3EA02DBE4427213FF890773FAE3D7A3F7CAC583FA0742E3FCB57073FFEE6CD3E02F79A3EF2E7673EEFF82C3E18CA003E6E99BF3DDD718E3D42BD533D98581D3DAAD4E93C06BDAD3CF115813CC6D03F3C72830E3C17C4D33BC2559D3BF4C9693B67B22D3BF00C013B85C2BF3A7F788E3A82B3533A4F491D3AB8CD753F3FF480BE124B7CBF37E946BF475682BEFBFA573EEE56083F715A3B3F364C593FF6626A3F26FE733F3E59793F40527C3F99F77D3F92E07E3F4A617F3F60A87F3FA1CF7F3F4CE57F3F42F17F3FDDF77F3F82FB7F3F85FD7F3FA2FE7F3F3FFF7F3F95FF7F3FC5FF7F3FDFFF7F3FEEFF7F3FF6FF7F3FFBFF7F3FFDFF7F3F107C75BF2DD70ABFE7ADBE3E2419633FB2B67F3F9FBC673FFFCA3E3F8BBE153FC73AE53E751AAD3E99C3813E59C5413E0B5B103EB6D2D63DCFBC9F3D71776D3D3479303DB021033DF5DDC23C0AC9903C4425573CEED81F3CFC85ED3BD678B03BD61C833BFDD2423B58BF103B9315D73AC5CC9F3A7F736D3AED6A303A6E12033A2B3C913E6C1457BF9C956DBF4253ECBED6AC413DA191D93EDEAF2A3FC6A24F3FC5E8643FC6EC703F3BA4773FF55F7B3F87717D3F77967E3F5A387F3FC5917F3F25C37F3F68DE7F3F75ED7F3FC3F57F3F59FA7F3FE2FC7F3F47FE7F3F0DFF7F3F7AFF7F3FB6FF7F3FD7FF7F3FE9FF7F3FF4FF7F3FF9FF7F3FFCFF7F3FFEFF7F3FCFBD41BF30FA2C3E1AC44D3F15617F3FA64D703F4268493F0F871F3F4665F53E84CCB93E297B8B3EEC71503ED75A1B3E2B3FE73DF3F8AB3D70AC7F3DF9023E3DCA310D3DCED2D13C1FE69B3C2CA9673C451E2C3CDDC1FF3BF004BE3B882D8D3BCBC7513B03DC1B3B9298E73A4411AC3A09AE7F3A00F63D3A58220D3A16B7D139305527BF32527CBFB04D18BF80898EBD8886B03EC4051E3F9F37483F2AAE603F958C6E3F4051763FD8A37A3F63097D3FE35C7E3F8A187F3F34807F3F72B97F3F0DD97F3F80EA7F3F22F47F3F73F97F3F62FC7F3F01FE7F3FE6FE7F3F64FF7F3FAAFF7F3FD1FF7F3FE6FF7F3FF2FF7F3FF8FF7F3FFCFF7F3FFEFF7F3FFFFF7F3FC381103E5C894A3F56127F3F594E713F44C14A3FCACC203F1D85F73EC479BB3E90C48C3E1164523E87D01C3E5E6DE93DE098AD3DBE0B813D4CCF3F3DF6870E3D63CFD33C08609D3CC4DA693C87BF2D3CF716013C9DD1BF3BCB838E3B60C4533BE0551D3B0CCAE93A71B2AD3AF40C813A88C23F3A81780E3A84B3D33950499D3926707DBF8E921CBF0542AEBD71F7AA3E214A1C3F6332473FD518603F90386E3F6322763FD3897A3FFAFA7C3FEB547E3F23147F3FC57D7F3F1AB87F3F4FD87F3F17EA7F3FE8F37F3F53F97F3F51FC7F3FF7FD7F3FE1FE7F3F61FF7F3FA8FF7F3FD0FF7F3FE5FF7F3FF1FF7F3FF8FF7F3FFCFF7F3FFEFF7F3FFFFF7F3FFFFF7F3FB7C7683F20147F3F559C643F74363B3F1787123F69F9DF3ED1FFA83E9A437D3E6E0C3D3EA9D10C3E738BD13D70CE9B3D0B9E673DDF1F2C3D5FCCFF3C1210BE3C2A378D3C36D7513CEEE71B3CA8AAE73BE01EAC3B5CC27F3B25053E3B9E2D0D3BDCC7D13A0BDC9B3A9898673A46112C3A0BAEFF3901F6BD3958228D3916B751393211D5BE259AAD3D1B6BE63E3F9B2E3F0CEB513FC834663FFAA6713FEA0B783F76997B3F5B917D3F0FA87E3F12427F3F23977F3F1CC67F3F0BE07F3F5CEE7F3F43F67F3FA0FA7F3F08FD7F3F5DFE7F3F19FF7F3F80FF7F3FB9FF7F3FD9FF7F3FEBFF7F3FF4FF7F3FF9FF7F3FFCFF7F3FFEFF7F3FFFFF7F3FFFFF7F3F0000803FA56A573F612D2D3F3F3E063F1224CC3E639A993EAAD6653E0E6B2B3E2041FF3DC2DDBD3D97278D3DF8D1513D5EEB1B3DC6B5E73C9B29AC3C5BD47F3C59133E3C81380D3C50D8D13B61E89B3B06AB673B071F2C3B7CC2FF3A3205BE3AA32D8D3AE1C7513A0CDC1B3A9A98E7394711AC390CAE7F3901F63D3958220D3916B7D13840510A3F16893C3F96FA593F7CC56A3F3C35743FDD77793F38637C3FFC007E3FC2E57E3F27647F3FF5A97F3F80D07F3FC7E57F3F87F17F3F03F87F3F97FB7F3F91FD7F3FA8FE7F3F42FF7F3F97FF7F3FC6FF7F3FE0FF7F3FEEFF7F3FF6FF7F3FFBFF7F3FFDFF7F3FFEFF7F3FFFFF7F3F0000803F0000803F0000803F0000803F00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"> : tensor<13x64xf32>
  %pos = func.call @linear_13_K64_N64_Ibf16_Df32(%signal, %wpos) : (tensor<13x64xf32>, tensor<64x64xbf16>) -> (tensor<13x64xf32>)
  %pos_heads = stablehlo.reshape %pos : (tensor<13x64xf32>) -> tensor<13x2x32xf32>
  %pos_op = stablehlo.reduce_precision %pos_heads, format = e8m7 : tensor<13x2x32xf32>
  %q_heads = stablehlo.reshape %q : (!x) -> !heads
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [3] : (tensor<32xf32>) -> !heads
  %q_scaled_raw = stablehlo.multiply %q_heads, %scale_b : !heads
  %q_scaled = stablehlo.reduce_precision %q_scaled_raw, format = e8m7 : !heads
  %k_heads = stablehlo.reshape %k : (!x) -> !heads
  %v_heads = stablehlo.reshape %v : (!x) -> !heads
  %k_heads_op = stablehlo.reduce_precision %k_heads, format = e8m7 : !heads_op
  %v_heads_op = stablehlo.reduce_precision %v_heads, format = e8m7 : !heads_op
  %valid_v = stablehlo.broadcast_in_dim %valid, dims = [0, 1] : (!valid) -> tensor<1x25x2x32xi1>
  %v_zero = stablehlo.constant dense<0.000000e+00> : !heads_op
  %v_valid_op = stablehlo.select %valid_v, %v_heads_op, %v_zero : tensor<1x25x2x32xi1>, !heads_op
  %q_padded = stablehlo.pad %q_scaled, %zero, low = [0, 0, 0, 0], high = [0, 11, 0, 0], interior = [0, 0, 0, 0] : (!heads, tensor<f32>) -> !q_pad
  %q_blk = stablehlo.reshape %q_padded : (!q_pad) -> !q_blk
  %k_op_pad = stablehlo.pad %k_heads_op, %zero_op, low = [0, 12, 0, 0], high = [0, 11, 0, 0], interior = [0, 0, 0, 0] : (!heads_op, tensor<f32>) -> !kv_pad
  %k_op_blocks = stablehlo.reshape %k_op_pad : (!kv_pad) -> !kv_blocks
  %k_op_b0 = "stablehlo.slice"(%k_op_blocks) {start_indices = array<i64: 0, 0, 0, 0, 0>, limit_indices = array<i64: 1, 3, 12, 2, 32>, strides = array<i64: 1, 1, 1, 1, 1>} : (!kv_blocks) -> !kv_slice
  %k_op_b1 = "stablehlo.slice"(%k_op_blocks) {start_indices = array<i64: 0, 1, 0, 0, 0>, limit_indices = array<i64: 1, 4, 12, 2, 32>, strides = array<i64: 1, 1, 1, 1, 1>} : (!kv_blocks) -> !kv_slice
  %k_op_slots = stablehlo.concatenate %k_op_b0, %k_op_b1, dim = 2 : (!kv_slice, !kv_slice) -> !ctx
  %k_op = stablehlo.transpose %k_op_slots, dims = [0, 1, 3, 2, 4] : (!ctx) -> !win
  %v_op_pad = stablehlo.pad %v_valid_op, %zero_op, low = [0, 12, 0, 0], high = [0, 11, 0, 0], interior = [0, 0, 0, 0] : (!heads_op, tensor<f32>) -> !kv_pad
  %v_op_blocks = stablehlo.reshape %v_op_pad : (!kv_pad) -> !kv_blocks
  %v_op_b0 = "stablehlo.slice"(%v_op_blocks) {start_indices = array<i64: 0, 0, 0, 0, 0>, limit_indices = array<i64: 1, 3, 12, 2, 32>, strides = array<i64: 1, 1, 1, 1, 1>} : (!kv_blocks) -> !kv_slice
  %v_op_b1 = "stablehlo.slice"(%v_op_blocks) {start_indices = array<i64: 0, 1, 0, 0, 0>, limit_indices = array<i64: 1, 4, 12, 2, 32>, strides = array<i64: 1, 1, 1, 1, 1>} : (!kv_blocks) -> !kv_slice
  %v_op_slots = stablehlo.concatenate %v_op_b0, %v_op_b1, dim = 2 : (!kv_slice, !kv_slice) -> !ctx
  %v_op = stablehlo.transpose %v_op_slots, dims = [0, 1, 3, 2, 4] : (!ctx) -> !win
  %q_op = stablehlo.reduce_precision %q_blk, format = e8m7 : tensor<1x3x12x2x32xf32>
  %content_raw = stablehlo.dot_general %q_op, %k_op, batching_dims = [0, 1, 3] x [0, 1, 2], contracting_dims = [4] x [4], precision = [DEFAULT, DEFAULT] : (tensor<1x3x12x2x32xf32>, !win) -> !logits
  %content = stablehlo.reduce_precision %content_raw, format = e8m7 : !logits
  %rel_hbuwl = stablehlo.dot_general %q_op, %pos_op, batching_dims = [3] x [1], contracting_dims = [4] x [2], precision = [DEFAULT, DEFAULT] : (tensor<1x3x12x2x32xf32>, tensor<13x2x32xf32>) -> tensor<2x1x3x12x13xf32>
  %rel_rounded = stablehlo.reduce_precision %rel_hbuwl, format = e8m7 : tensor<2x1x3x12x13xf32>
  %rel = stablehlo.transpose %rel_rounded, dims = [1, 2, 0, 3, 4] : (tensor<2x1x3x12x13xf32>) -> !rel
  %rel_padded = stablehlo.pad %rel, %zero, low = [0, 0, 0, 0, 0], high = [0, 0, 0, 0, 12], interior = [0, 0, 0, 0, 0] : (!rel, tensor<f32>) -> !rel_pad
  %rel_flat = stablehlo.reshape %rel_padded : (!rel_pad) -> tensor<1x3x2x300xf32>
  %rel_cut = "stablehlo.slice"(%rel_flat) {start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 1, 3, 2, 288>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x2x300xf32>) -> tensor<1x3x2x288xf32>
  %positional = stablehlo.reshape %rel_cut : (tensor<1x3x2x288xf32>) -> !logits
  %logits_raw = stablehlo.add %content, %positional : !logits
  %logits = stablehlo.reduce_precision %logits_raw, format = e8m7 : !logits
  %cap_s = stablehlo.constant dense<0x42480000> : tensor<f32>
  %cap = stablehlo.broadcast_in_dim %cap_s, dims = [] : (tensor<f32>) -> tensor<1x3x2x12x24xf32>
  %capped_in = stablehlo.divide %logits, %cap : !logits
  %capped_tanh = stablehlo.tanh %capped_in : !logits
  %capped_raw = stablehlo.multiply %capped_tanh, %cap : !logits
  %capped = stablehlo.reduce_precision %capped_raw, format = e8m7 : !logits
  %q_pos = stablehlo.iota dim = 3 : tensor<1x3x2x12x24xi32>
  %k_pos = stablehlo.iota dim = 4 : tensor<1x3x2x12x24xi32>
  %lag = stablehlo.subtract %k_pos, %q_pos : tensor<1x3x2x12x24xi32>
  %lag_lo = stablehlo.constant dense<0> : tensor<1x3x2x12x24xi32>
  %lag_hi = stablehlo.constant dense<12> : tensor<1x3x2x12x24xi32>
  %after = stablehlo.compare GE, %lag, %lag_lo, SIGNED : (tensor<1x3x2x12x24xi32>, tensor<1x3x2x12x24xi32>) -> !cond
  %before = stablehlo.compare LE, %lag, %lag_hi, SIGNED : (tensor<1x3x2x12x24xi32>, tensor<1x3x2x12x24xi32>) -> !cond
  %band = stablehlo.and %after, %before : !cond
  %false = stablehlo.constant dense<false> : tensor<i1>
  %valid_pad = stablehlo.pad %valid, %false, low = [0, 12], high = [0, 11], interior = [0, 0] : (!valid, tensor<i1>) -> tensor<1x48xi1>
  %valid_blocks = stablehlo.reshape %valid_pad : (tensor<1x48xi1>) -> tensor<1x4x12xi1>
  %valid_b0 = "stablehlo.slice"(%valid_blocks) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 12>, strides = array<i64: 1, 1, 1>} : (tensor<1x4x12xi1>) -> tensor<1x3x12xi1>
  %valid_b1 = "stablehlo.slice"(%valid_blocks) {start_indices = array<i64: 0, 1, 0>, limit_indices = array<i64: 1, 4, 12>, strides = array<i64: 1, 1, 1>} : (tensor<1x4x12xi1>) -> tensor<1x3x12xi1>
  %key_valid = stablehlo.concatenate %valid_b0, %valid_b1, dim = 2 : (tensor<1x3x12xi1>, tensor<1x3x12xi1>) -> tensor<1x3x24xi1>
  %key_valid_b = stablehlo.broadcast_in_dim %key_valid, dims = [0, 1, 4] : (tensor<1x3x24xi1>) -> !cond
  %allowed = stablehlo.and %band, %key_valid_b : !cond
  %mask_value = stablehlo.constant dense<0xFF7F0000> : !logits
  %masked = stablehlo.select %allowed, %capped, %mask_value : !cond, !logits
  %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %row_max = stablehlo.reduce(%masked init: %neg_inf) applies stablehlo.maximum across dimensions = [4] : (!logits, tensor<f32>) -> !rows
  %row_max_b = stablehlo.broadcast_in_dim %row_max, dims = [0, 1, 2, 3] : (!rows) -> !logits
  %shifted = stablehlo.subtract %masked, %row_max_b : !logits
  %exp = stablehlo.exponential %shifted : !logits
  %exp_rows = stablehlo.reshape %exp : (!logits) -> tensor<72x24xf32>
  %exp_sum_flat = func.call @lane_xor_sum_R72_W24_X1(%exp_rows) : (tensor<72x24xf32>) -> (tensor<72xf32>)
  %exp_sum = stablehlo.reshape %exp_sum_flat : (tensor<72xf32>) -> !rows
  %exp_sum_b = stablehlo.broadcast_in_dim %exp_sum, dims = [0, 1, 2, 3] : (!rows) -> !logits
  %probs_raw = stablehlo.divide %exp, %exp_sum_b : !logits
  %probs = stablehlo.reduce_precision %probs_raw, format = e8m7 : !logits
  %p_op = stablehlo.reduce_precision %probs, format = e8m7 : tensor<1x3x2x12x24xf32>
  %attended_raw = stablehlo.dot_general %p_op, %v_op, batching_dims = [0, 1, 2] x [0, 1, 2], contracting_dims = [4] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x3x2x12x24xf32>, !win) -> tensor<1x3x2x12x32xf32>
  %attended = stablehlo.reduce_precision %attended_raw, format = e8m7 : tensor<1x3x2x12x32xf32>
  %attended_t = stablehlo.transpose %attended, dims = [0, 1, 3, 2, 4] : (tensor<1x3x2x12x32xf32>) -> !q_blk
  %attended_flat = stablehlo.reshape %attended_t : (!q_blk) -> tensor<1x36x64xf32>
  %context = "stablehlo.slice"(%attended_flat) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 25, 64>, strides = array<i64: 1, 1, 1>} : (tensor<1x36x64xf32>) -> !x
  %out = func.call @linear_1x25_K64_N64_Ibf16_Df32(%context, %wpost) : (tensor<1x25x64xf32>, tensor<64x64xbf16>) -> (tensor<1x25x64xf32>)
  %y = func.call @rms_norm_1x25_D64_scaled_clip501502f9_res1(%out, %post_norm, %x) : (tensor<1x25x64xf32>, tensor<64xbf16>, tensor<1x25x64xf32>) -> (tensor<1x25x64xf32>)
  return %y : !x
}
