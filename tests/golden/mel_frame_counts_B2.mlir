!n = tensor<2xi32>
func.func private @mel_frame_counts_B2(%n: !n) -> !n {
  %hop = stablehlo.constant dense<160> : !n
  %hop_less_one = stablehlo.constant dense<159> : !n
  %pad = stablehlo.constant dense<128> : !n
  %pad_less_one = stablehlo.constant dense<127> : !n
  %shortest = stablehlo.constant dense<640> : !n
  %window = stablehlo.constant dense<513> : !n
  %one = stablehlo.constant dense<1> : !n
  %hops_up = stablehlo.add %n, %hop_less_one : !n
  %covered = stablehlo.divide %hops_up, %hop : !n
  %pads_up = stablehlo.add %n, %pad_less_one : !n
  %pads = stablehlo.divide %pads_up, %pad : !n
  %padded_raw = stablehlo.multiply %pads, %pad : !n
  %padded = stablehlo.maximum %padded_raw, %shortest : !n
  %room = stablehlo.subtract %padded, %window : !n
  %steps = stablehlo.divide %room, %hop : !n
  %total = stablehlo.add %steps, %one : !n
  %frames = stablehlo.minimum %covered, %total : !n
  return %frames : !n
}
