// Shardings that do not divide their dimensions, in GSPMD's form (mhlo.sharding), run on
// a (data=2, model=4) mesh: w's 3 rows split 2 ways (tiles of 2, the second holding 1 row
// and 1 of padding) and its 6 columns 4 ways (tiles of 2, the last all padding). The
// Sharding custom call keeps GSPMD's shardings in the module, so XLA compiles it with GSPMD.
module @uneven attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x6xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"} loc("w"), %arg1: tensor<8x6xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"} loc("x")) -> (tensor<3x8xf32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}, tensor<3x6xf32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[2,4]<=[8]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] : (tensor<3x6xf32>, tensor<8x6xf32>) -> tensor<3x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<3x8xf32>) -> tensor<3x8xf32>
    %2 = stablehlo.tanh %1 : tensor<3x8xf32>
    %3 = stablehlo.exponential %arg0 : tensor<3x6xf32>
    return %2, %3 : tensor<3x8xf32>, tensor<3x6xf32>
  }
}
