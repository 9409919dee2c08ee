module @SyncTensorsGraph.1238 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func private @MaxComputation.233(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.maximum %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.242(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AllComputation.261(%arg0: tensor<i1>, %arg1: tensor<i1>) -> tensor<i1> {
    %c = stablehlo.constant dense<false> : tensor<i1>
    %0 = stablehlo.compare NE, %arg0, %c : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %1 = stablehlo.compare NE, %arg1, %c : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %2 = stablehlo.and %0, %1 : tensor<i1>
    %c_0 = stablehlo.constant dense<true> : tensor<i1>
    %3 = stablehlo.select %2, %c_0, %c : tensor<i1>, tensor<i1>
    return %3 : tensor<i1>
  }
  func.func private @MaxComputation.417(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.maximum %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.426(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AllComputation.445(%arg0: tensor<i1>, %arg1: tensor<i1>) -> tensor<i1> {
    %c = stablehlo.constant dense<false> : tensor<i1>
    %0 = stablehlo.compare NE, %arg0, %c : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %1 = stablehlo.compare NE, %arg1, %c : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %2 = stablehlo.and %0, %1 : tensor<i1>
    %c_0 = stablehlo.constant dense<true> : tensor<i1>
    %3 = stablehlo.select %2, %c_0, %c : tensor<i1>, tensor<i1>
    return %3 : tensor<i1>
  }
  func.func private @MaxComputation.545(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.maximum %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.554(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.589(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.595(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.686(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.698(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.788(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.898(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @ScatterCombiner.974(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.990(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1002(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1032(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1044(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1063(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1083(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1099(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1111(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1141(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1153(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1172(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1192(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1208(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @AddComputation.1220(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @main(%arg0: tensor<8x16xi64> {mhlo.sharding = "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"}, %arg1: tensor<256x64xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg2: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg3: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg4: tensor<64x256xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg5: tensor<256xf32> {mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg6: tensor<256x64xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg7: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg8: tensor<64x64xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg9: tensor<192x64xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg10: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg11: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg12: tensor<64x256xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg13: tensor<256xf32> {mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg14: tensor<256x64xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg15: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg16: tensor<64x64xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg17: tensor<192x64xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg18: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg19: tensor<256x64xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg20: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg21: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg22: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg23: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg24: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg25: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg26: tensor<64xf32> {mhlo.sharding = "{replicated}"}, %arg27: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg28: tensor<i64> {mhlo.sharding = "{replicated}"}) -> (tensor<8x16xi64>, tensor<128x256xf32>, tensor<8x16x256xf32>, tensor<f32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<192x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<192x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reshape %cst : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %2 = stablehlo.reshape %1 : (tensor<1xf32>) -> tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reshape %cst_0 : (tensor<f32>) -> tensor<1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %6 = stablehlo.reshape %5 : (tensor<1xf32>) -> tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reshape %cst_1 : (tensor<f32>) -> tensor<1xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %10 = stablehlo.reshape %9 : (tensor<1xf32>) -> tensor<f32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.reshape %cst_2 : (tensor<f32>) -> tensor<1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %14 = stablehlo.reshape %13 : (tensor<1xf32>) -> tensor<f32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reshape %cst_3 : (tensor<f32>) -> tensor<1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %18 = stablehlo.reshape %17 : (tensor<1xf32>) -> tensor<f32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.reshape %cst_4 : (tensor<f32>) -> tensor<1xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %22 = stablehlo.reshape %21 : (tensor<1xf32>) -> tensor<f32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.reshape %cst_5 : (tensor<f32>) -> tensor<1xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %26 = stablehlo.reshape %25 : (tensor<1xf32>) -> tensor<f32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reshape %cst_6 : (tensor<f32>) -> tensor<1xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %30 = stablehlo.reshape %29 : (tensor<1xf32>) -> tensor<f32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.reshape %cst_7 : (tensor<f32>) -> tensor<1xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %34 = stablehlo.reshape %33 : (tensor<1xf32>) -> tensor<f32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reshape %cst_8 : (tensor<f32>) -> tensor<1xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %38 = stablehlo.reshape %37 : (tensor<1xf32>) -> tensor<f32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %c = stablehlo.constant dense<16> : tensor<i32>
    %c_9 = stablehlo.constant dense<16> : tensor<i32>
    %40 = stablehlo.reshape %arg0 : (tensor<8x16xi64>) -> tensor<128xi64>
    %41 = stablehlo.convert %40 : (tensor<128xi64>) -> tensor<128xui32>
    %42 = "stablehlo.gather"(%arg19, %41) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}> : (tensor<256x64xf32>, tensor<128xui32>) -> tensor<128x64xf32>
    %43 = stablehlo.reshape %42 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %44 = stablehlo.broadcast_in_dim %arg20, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %45 = stablehlo.reshape %43 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %46 = stablehlo.reshape %cst_10 : (tensor<f32>) -> tensor<1xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %48 = stablehlo.reshape %47 : (tensor<1xf32>) -> tensor<f32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %50 = stablehlo.reshape %cst_11 : (tensor<f32>) -> tensor<1xf32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %52 = stablehlo.reshape %51 : (tensor<1xf32>) -> tensor<f32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %output, %batch_mean, %batch_var = "stablehlo.batch_norm_training"(%45, %49, %53) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %54 = stablehlo.reshape %output : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %55 = stablehlo.broadcast_in_dim %arg18, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %56 = stablehlo.multiply %54, %55 : tensor<8x16x64xf32>
    %c_12 = stablehlo.constant dense<1> : tensor<i64>
    %57 = stablehlo.convert %c_12 : (tensor<i64>) -> tensor<f32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %59 = stablehlo.multiply %56, %58 : tensor<8x16x64xf32>
    %60 = stablehlo.add %44, %59 : tensor<8x16x64xf32>
    %61 = stablehlo.reshape %60 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %62 = stablehlo.transpose %arg17, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,192]{0,1}"} : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %63 = stablehlo.dot %61, %62, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x192xf32>) -> tensor<128x192xf32>
    %64 = stablehlo.reshape %63 : (tensor<128x192xf32>) -> tensor<8x16x192xf32>
    %65 = stablehlo.reshape %64 : (tensor<8x16x192xf32>) -> tensor<8x16x3x4x16xf32>
    %66 = stablehlo.slice %65 [0:8, 0:16, 0:1, 0:4, 0:16] : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %67 = stablehlo.reshape %66 : (tensor<8x16x1x4x16xf32>) -> tensor<8x16x4x16xf32>
    %68 = stablehlo.transpose %67, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %69 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %70 = stablehlo.multiply %68, %69 : tensor<8x4x16x16xf32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %72 = stablehlo.reshape %71 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %73 = stablehlo.slice %65 [0:8, 0:16, 1:2, 0:4, 0:16] : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %74 = stablehlo.reshape %73 : (tensor<8x16x1x4x16xf32>) -> tensor<8x16x4x16xf32>
    %75 = stablehlo.transpose %74, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %76 = stablehlo.transpose %75, dims = [0, 1, 3, 2] {result_layout = dense<[2, 1, 3, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{2,1,3,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %77 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %78 = stablehlo.multiply %76, %77 : tensor<8x4x16x16xf32>
    %79 = stablehlo.broadcast_in_dim %78, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %80 = stablehlo.reshape %79 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %81 = stablehlo.dot_general %72, %80, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %82 = stablehlo.reshape %81 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %83 = stablehlo.iota dim = 0 : tensor<16xi32>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %84 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %85 = stablehlo.add %83, %84 : tensor<16xi32>
    %86 = stablehlo.broadcast_in_dim %85, dims = [0] : (tensor<16xi32>) -> tensor<16x16xi32>
    %87 = stablehlo.iota dim = 0 : tensor<16xi32>
    %88 = stablehlo.broadcast_in_dim %87, dims = [1] : (tensor<16xi32>) -> tensor<16x16xi32>
    %89 = stablehlo.compare GE, %86, %88 : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %90 = stablehlo.broadcast_in_dim %89, dims = [0, 1] : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %c_14 = stablehlo.constant dense<true> : tensor<i1>
    %91 = stablehlo.reshape %c_14 : (tensor<i1>) -> tensor<1x1xi1>
    %92 = stablehlo.broadcast_in_dim %91, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<1x1xi1>
    %93 = stablehlo.reshape %92 : (tensor<1x1xi1>) -> tensor<i1>
    %94 = stablehlo.broadcast_in_dim %93, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %c_15 = stablehlo.constant dense<false> : tensor<i1>
    %95 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %96 = stablehlo.select %90, %94, %95 : tensor<16x16xi1>, tensor<16x16xi1>
    %97 = stablehlo.broadcast_in_dim %96, dims = [0, 1] : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %98 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<f32>
    %99 = stablehlo.reshape %98 : (tensor<f32>) -> tensor<1x1xf32>
    %100 = stablehlo.broadcast_in_dim %99, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %101 = stablehlo.reshape %100 : (tensor<1x1xf32>) -> tensor<f32>
    %102 = stablehlo.broadcast_in_dim %101, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %103 = stablehlo.broadcast_in_dim %arg21, dims = [] : (tensor<f32>) -> tensor<f32>
    %104 = stablehlo.reshape %103 : (tensor<f32>) -> tensor<1x1xf32>
    %105 = stablehlo.broadcast_in_dim %104, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %106 = stablehlo.reshape %105 : (tensor<1x1xf32>) -> tensor<f32>
    %107 = stablehlo.broadcast_in_dim %106, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %108 = stablehlo.select %97, %102, %107 : tensor<16x16xi1>, tensor<16x16xf32>
    %cst_17 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %109 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %110 = stablehlo.multiply %108, %109 : tensor<16x16xf32>
    %111 = stablehlo.broadcast_in_dim %110, dims = [2, 3] : (tensor<16x16xf32>) -> tensor<8x4x16x16xf32>
    %112 = stablehlo.add %82, %111 : tensor<8x4x16x16xf32>
    %cst_18 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %113 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %114 = stablehlo.compare EQ, %112, %113 : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xi1>
    %c_19 = stablehlo.constant dense<true> : tensor<i1>
    %115 = stablehlo.reduce(%114 init: %c_19) across dimensions = [3] : (tensor<8x4x16x16xi1>, tensor<i1>) -> tensor<8x4x16xi1>
     reducer(%arg29: tensor<i1>, %arg30: tensor<i1>)  {
      %c_180 = stablehlo.constant dense<false> : tensor<i1>
      %883 = stablehlo.compare NE, %arg29, %c_180 : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %884 = stablehlo.compare NE, %arg30, %c_180 : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %885 = stablehlo.and %883, %884 : tensor<i1>
      %c_181 = stablehlo.constant dense<true> : tensor<i1>
      %886 = stablehlo.select %885, %c_181, %c_180 : tensor<i1>, tensor<i1>
      stablehlo.return %886 : tensor<i1>
    }
    %c_20 = stablehlo.constant dense<false> : tensor<i1>
    %116 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<i1>) -> tensor<8x4x16xi1>
    %117 = stablehlo.compare NE, %115, %116 : (tensor<8x4x16xi1>, tensor<8x4x16xi1>) -> tensor<8x4x16xi1>
    %118 = stablehlo.reshape %117 : (tensor<8x4x16xi1>) -> tensor<8x4x16x1xi1>
    %119 = stablehlo.broadcast_in_dim %118, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xi1>) -> tensor<8x4x16x1xi1>
    %120 = stablehlo.reshape %119 : (tensor<8x4x16x1xi1>) -> tensor<8x4x16xi1>
    %121 = stablehlo.broadcast_in_dim %120, dims = [0, 1, 2] : (tensor<8x4x16xi1>) -> tensor<8x4x16x16xi1>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %122 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<f32>
    %123 = stablehlo.reshape %122 : (tensor<f32>) -> tensor<1x1x1x1xf32>
    %124 = stablehlo.broadcast_in_dim %123, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %125 = stablehlo.reshape %124 : (tensor<1x1x1x1xf32>) -> tensor<f32>
    %126 = stablehlo.broadcast_in_dim %125, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %cst_22 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %127 = stablehlo.reduce(%112 init: %cst_22) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %128 = stablehlo.broadcast_in_dim %127, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %129 = stablehlo.subtract %112, %128 : tensor<8x4x16x16xf32>
    %130 = stablehlo.exponential %129 : tensor<8x4x16x16xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %131 = stablehlo.reduce(%130 init: %cst_23) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %132 = stablehlo.broadcast_in_dim %131, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %133 = stablehlo.divide %130, %132 : tensor<8x4x16x16xf32>
    %134 = stablehlo.broadcast_in_dim %133, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %135 = stablehlo.select %121, %126, %134 : tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>
    %136 = stablehlo.broadcast_in_dim %135, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %137 = stablehlo.reshape %136 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %138 = stablehlo.slice %65 [0:8, 0:16, 2:3, 0:4, 0:16] : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %139 = stablehlo.reshape %138 : (tensor<8x16x1x4x16xf32>) -> tensor<8x16x4x16xf32>
    %140 = stablehlo.transpose %139, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %141 = stablehlo.broadcast_in_dim %140, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %142 = stablehlo.reshape %141 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %143 = stablehlo.dot_general %137, %142, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %144 = stablehlo.reshape %143 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %145 = stablehlo.transpose %144, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{3,1,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %146 = stablehlo.reshape %145 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %147 = stablehlo.reshape %146 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %148 = stablehlo.transpose %arg16, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,64]{0,1}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %149 = stablehlo.dot %147, %148, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %150 = stablehlo.reshape %149 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_24 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %152 = stablehlo.multiply %150, %151 : tensor<8x16x64xf32>
    %153 = stablehlo.add %43, %152 : tensor<8x16x64xf32>
    %154 = stablehlo.broadcast_in_dim %arg23, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %155 = stablehlo.reshape %153 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %cst_25 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %156 = stablehlo.reshape %cst_25 : (tensor<f32>) -> tensor<1xf32>
    %157 = stablehlo.broadcast_in_dim %156, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %158 = stablehlo.reshape %157 : (tensor<1xf32>) -> tensor<f32>
    %159 = stablehlo.broadcast_in_dim %158, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %160 = stablehlo.reshape %cst_26 : (tensor<f32>) -> tensor<1xf32>
    %161 = stablehlo.broadcast_in_dim %160, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %162 = stablehlo.reshape %161 : (tensor<1xf32>) -> tensor<f32>
    %163 = stablehlo.broadcast_in_dim %162, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %output_27, %batch_mean_28, %batch_var_29 = "stablehlo.batch_norm_training"(%155, %159, %163) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %164 = stablehlo.reshape %output_27 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %165 = stablehlo.broadcast_in_dim %arg15, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %166 = stablehlo.multiply %164, %165 : tensor<8x16x64xf32>
    %c_30 = stablehlo.constant dense<1> : tensor<i64>
    %167 = stablehlo.convert %c_30 : (tensor<i64>) -> tensor<f32>
    %168 = stablehlo.broadcast_in_dim %167, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %169 = stablehlo.multiply %166, %168 : tensor<8x16x64xf32>
    %170 = stablehlo.add %154, %169 : tensor<8x16x64xf32>
    %171 = stablehlo.reshape %170 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %172 = stablehlo.transpose %arg14, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,256]{0,1}"} : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %173 = stablehlo.dot %171, %172, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
    %174 = stablehlo.reshape %173 : (tensor<128x256xf32>) -> tensor<8x16x256xf32>
    %cst_31 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %175 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %176 = stablehlo.multiply %arg13, %175 : tensor<256xf32>
    %177 = stablehlo.broadcast_in_dim %176, dims = [2] : (tensor<256xf32>) -> tensor<8x16x256xf32>
    %178 = stablehlo.add %174, %177 : tensor<8x16x256xf32>
    %cst_32 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %179 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %180 = stablehlo.multiply %178, %179 : tensor<8x16x256xf32>
    %cst_33 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %181 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %182 = stablehlo.multiply %178, %181 : tensor<8x16x256xf32>
    %183 = mhlo.erf %182 : tensor<8x16x256xf32>
    %cst_34 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %184 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %185 = stablehlo.add %183, %184 : tensor<8x16x256xf32>
    %186 = stablehlo.multiply %180, %185 : tensor<8x16x256xf32>
    %187 = stablehlo.reshape %186 : (tensor<8x16x256xf32>) -> tensor<128x256xf32>
    %188 = stablehlo.transpose %arg12, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,64]{0,1}"} : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %189 = stablehlo.dot %187, %188, precision = [DEFAULT, DEFAULT] : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
    %190 = stablehlo.reshape %189 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_35 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %191 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %192 = stablehlo.multiply %arg11, %191 : tensor<64xf32>
    %193 = stablehlo.broadcast_in_dim %192, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %194 = stablehlo.add %190, %193 : tensor<8x16x64xf32>
    %cst_36 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %195 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %196 = stablehlo.multiply %194, %195 : tensor<8x16x64xf32>
    %197 = stablehlo.add %153, %196 : tensor<8x16x64xf32>
    %198 = stablehlo.broadcast_in_dim %arg24, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %199 = stablehlo.reshape %197 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %cst_37 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %200 = stablehlo.reshape %cst_37 : (tensor<f32>) -> tensor<1xf32>
    %201 = stablehlo.broadcast_in_dim %200, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %202 = stablehlo.reshape %201 : (tensor<1xf32>) -> tensor<f32>
    %203 = stablehlo.broadcast_in_dim %202, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %204 = stablehlo.reshape %cst_38 : (tensor<f32>) -> tensor<1xf32>
    %205 = stablehlo.broadcast_in_dim %204, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %206 = stablehlo.reshape %205 : (tensor<1xf32>) -> tensor<f32>
    %207 = stablehlo.broadcast_in_dim %206, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %output_39, %batch_mean_40, %batch_var_41 = "stablehlo.batch_norm_training"(%199, %203, %207) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %208 = stablehlo.reshape %output_39 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %209 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %210 = stablehlo.multiply %208, %209 : tensor<8x16x64xf32>
    %c_42 = stablehlo.constant dense<1> : tensor<i64>
    %211 = stablehlo.convert %c_42 : (tensor<i64>) -> tensor<f32>
    %212 = stablehlo.broadcast_in_dim %211, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %213 = stablehlo.multiply %210, %212 : tensor<8x16x64xf32>
    %214 = stablehlo.add %198, %213 : tensor<8x16x64xf32>
    %215 = stablehlo.reshape %214 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %216 = stablehlo.transpose %arg9, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,192]{0,1}"} : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %217 = stablehlo.dot %215, %216, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x192xf32>) -> tensor<128x192xf32>
    %218 = stablehlo.reshape %217 : (tensor<128x192xf32>) -> tensor<8x16x192xf32>
    %219 = stablehlo.reshape %218 : (tensor<8x16x192xf32>) -> tensor<8x16x3x4x16xf32>
    %220 = stablehlo.slice %219 [0:8, 0:16, 0:1, 0:4, 0:16] : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %221 = stablehlo.reshape %220 : (tensor<8x16x1x4x16xf32>) -> tensor<8x16x4x16xf32>
    %222 = stablehlo.transpose %221, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %223 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %224 = stablehlo.multiply %222, %223 : tensor<8x4x16x16xf32>
    %225 = stablehlo.broadcast_in_dim %224, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %226 = stablehlo.reshape %225 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %227 = stablehlo.slice %219 [0:8, 0:16, 1:2, 0:4, 0:16] : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %228 = stablehlo.reshape %227 : (tensor<8x16x1x4x16xf32>) -> tensor<8x16x4x16xf32>
    %229 = stablehlo.transpose %228, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %230 = stablehlo.transpose %229, dims = [0, 1, 3, 2] {result_layout = dense<[2, 1, 3, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{2,1,3,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %231 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %232 = stablehlo.multiply %230, %231 : tensor<8x4x16x16xf32>
    %233 = stablehlo.broadcast_in_dim %232, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %234 = stablehlo.reshape %233 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %235 = stablehlo.dot_general %226, %234, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %236 = stablehlo.reshape %235 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %237 = stablehlo.iota dim = 0 : tensor<16xi32>
    %c_43 = stablehlo.constant dense<0> : tensor<i32>
    %238 = stablehlo.broadcast_in_dim %c_43, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %239 = stablehlo.add %237, %238 : tensor<16xi32>
    %240 = stablehlo.broadcast_in_dim %239, dims = [0] : (tensor<16xi32>) -> tensor<16x16xi32>
    %241 = stablehlo.iota dim = 0 : tensor<16xi32>
    %242 = stablehlo.broadcast_in_dim %241, dims = [1] : (tensor<16xi32>) -> tensor<16x16xi32>
    %243 = stablehlo.compare GE, %240, %242 : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %244 = stablehlo.broadcast_in_dim %243, dims = [0, 1] : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %c_44 = stablehlo.constant dense<true> : tensor<i1>
    %245 = stablehlo.reshape %c_44 : (tensor<i1>) -> tensor<1x1xi1>
    %246 = stablehlo.broadcast_in_dim %245, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<1x1xi1>
    %247 = stablehlo.reshape %246 : (tensor<1x1xi1>) -> tensor<i1>
    %248 = stablehlo.broadcast_in_dim %247, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %c_45 = stablehlo.constant dense<false> : tensor<i1>
    %249 = stablehlo.broadcast_in_dim %c_45, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %250 = stablehlo.select %244, %248, %249 : tensor<16x16xi1>, tensor<16x16xi1>
    %251 = stablehlo.broadcast_in_dim %250, dims = [0, 1] : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %252 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<f32>
    %253 = stablehlo.reshape %252 : (tensor<f32>) -> tensor<1x1xf32>
    %254 = stablehlo.broadcast_in_dim %253, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %255 = stablehlo.reshape %254 : (tensor<1x1xf32>) -> tensor<f32>
    %256 = stablehlo.broadcast_in_dim %255, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %257 = stablehlo.broadcast_in_dim %arg21, dims = [] : (tensor<f32>) -> tensor<f32>
    %258 = stablehlo.reshape %257 : (tensor<f32>) -> tensor<1x1xf32>
    %259 = stablehlo.broadcast_in_dim %258, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %260 = stablehlo.reshape %259 : (tensor<1x1xf32>) -> tensor<f32>
    %261 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %262 = stablehlo.select %251, %256, %261 : tensor<16x16xi1>, tensor<16x16xf32>
    %cst_47 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %263 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %264 = stablehlo.multiply %262, %263 : tensor<16x16xf32>
    %265 = stablehlo.broadcast_in_dim %264, dims = [2, 3] : (tensor<16x16xf32>) -> tensor<8x4x16x16xf32>
    %266 = stablehlo.add %236, %265 : tensor<8x4x16x16xf32>
    %cst_48 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %267 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %268 = stablehlo.compare EQ, %266, %267 : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xi1>
    %c_49 = stablehlo.constant dense<true> : tensor<i1>
    %269 = stablehlo.reduce(%268 init: %c_49) across dimensions = [3] : (tensor<8x4x16x16xi1>, tensor<i1>) -> tensor<8x4x16xi1>
     reducer(%arg29: tensor<i1>, %arg30: tensor<i1>)  {
      %c_180 = stablehlo.constant dense<false> : tensor<i1>
      %883 = stablehlo.compare NE, %arg29, %c_180 : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %884 = stablehlo.compare NE, %arg30, %c_180 : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %885 = stablehlo.and %883, %884 : tensor<i1>
      %c_181 = stablehlo.constant dense<true> : tensor<i1>
      %886 = stablehlo.select %885, %c_181, %c_180 : tensor<i1>, tensor<i1>
      stablehlo.return %886 : tensor<i1>
    }
    %c_50 = stablehlo.constant dense<false> : tensor<i1>
    %270 = stablehlo.broadcast_in_dim %c_50, dims = [] : (tensor<i1>) -> tensor<8x4x16xi1>
    %271 = stablehlo.compare NE, %269, %270 : (tensor<8x4x16xi1>, tensor<8x4x16xi1>) -> tensor<8x4x16xi1>
    %272 = stablehlo.reshape %271 : (tensor<8x4x16xi1>) -> tensor<8x4x16x1xi1>
    %273 = stablehlo.broadcast_in_dim %272, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xi1>) -> tensor<8x4x16x1xi1>
    %274 = stablehlo.reshape %273 : (tensor<8x4x16x1xi1>) -> tensor<8x4x16xi1>
    %275 = stablehlo.broadcast_in_dim %274, dims = [0, 1, 2] : (tensor<8x4x16xi1>) -> tensor<8x4x16x16xi1>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %276 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<f32>
    %277 = stablehlo.reshape %276 : (tensor<f32>) -> tensor<1x1x1x1xf32>
    %278 = stablehlo.broadcast_in_dim %277, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %279 = stablehlo.reshape %278 : (tensor<1x1x1x1xf32>) -> tensor<f32>
    %280 = stablehlo.broadcast_in_dim %279, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %cst_52 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %281 = stablehlo.reduce(%266 init: %cst_52) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %282 = stablehlo.broadcast_in_dim %281, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %283 = stablehlo.subtract %266, %282 : tensor<8x4x16x16xf32>
    %284 = stablehlo.exponential %283 : tensor<8x4x16x16xf32>
    %cst_53 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %285 = stablehlo.reduce(%284 init: %cst_53) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %286 = stablehlo.broadcast_in_dim %285, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %287 = stablehlo.divide %284, %286 : tensor<8x4x16x16xf32>
    %288 = stablehlo.broadcast_in_dim %287, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %289 = stablehlo.select %275, %280, %288 : tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>
    %290 = stablehlo.broadcast_in_dim %289, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %291 = stablehlo.reshape %290 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %292 = stablehlo.slice %219 [0:8, 0:16, 2:3, 0:4, 0:16] : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %293 = stablehlo.reshape %292 : (tensor<8x16x1x4x16xf32>) -> tensor<8x16x4x16xf32>
    %294 = stablehlo.transpose %293, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %295 = stablehlo.broadcast_in_dim %294, dims = [0, 1, 2, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %296 = stablehlo.reshape %295 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %297 = stablehlo.dot_general %291, %296, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %298 = stablehlo.reshape %297 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %299 = stablehlo.transpose %298, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{3,1,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %300 = stablehlo.reshape %299 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %301 = stablehlo.reshape %300 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %302 = stablehlo.transpose %arg8, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,64]{0,1}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %303 = stablehlo.dot %301, %302, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %304 = stablehlo.reshape %303 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_54 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %305 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %306 = stablehlo.multiply %304, %305 : tensor<8x16x64xf32>
    %307 = stablehlo.add %197, %306 : tensor<8x16x64xf32>
    %308 = stablehlo.broadcast_in_dim %arg25, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %309 = stablehlo.reshape %307 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %cst_55 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %310 = stablehlo.reshape %cst_55 : (tensor<f32>) -> tensor<1xf32>
    %311 = stablehlo.broadcast_in_dim %310, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %312 = stablehlo.reshape %311 : (tensor<1xf32>) -> tensor<f32>
    %313 = stablehlo.broadcast_in_dim %312, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_56 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %314 = stablehlo.reshape %cst_56 : (tensor<f32>) -> tensor<1xf32>
    %315 = stablehlo.broadcast_in_dim %314, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %316 = stablehlo.reshape %315 : (tensor<1xf32>) -> tensor<f32>
    %317 = stablehlo.broadcast_in_dim %316, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %output_57, %batch_mean_58, %batch_var_59 = "stablehlo.batch_norm_training"(%309, %313, %317) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %318 = stablehlo.reshape %output_57 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %319 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %320 = stablehlo.multiply %318, %319 : tensor<8x16x64xf32>
    %c_60 = stablehlo.constant dense<1> : tensor<i64>
    %321 = stablehlo.convert %c_60 : (tensor<i64>) -> tensor<f32>
    %322 = stablehlo.broadcast_in_dim %321, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %323 = stablehlo.multiply %320, %322 : tensor<8x16x64xf32>
    %324 = stablehlo.add %308, %323 : tensor<8x16x64xf32>
    %325 = stablehlo.reshape %324 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %326 = stablehlo.transpose %arg6, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,256]{0,1}"} : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %327 = stablehlo.dot %325, %326, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
    %328 = stablehlo.reshape %327 : (tensor<128x256xf32>) -> tensor<8x16x256xf32>
    %cst_61 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %329 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %330 = stablehlo.multiply %arg5, %329 : tensor<256xf32>
    %331 = stablehlo.broadcast_in_dim %330, dims = [2] : (tensor<256xf32>) -> tensor<8x16x256xf32>
    %332 = stablehlo.add %328, %331 : tensor<8x16x256xf32>
    %cst_62 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %333 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %334 = stablehlo.multiply %332, %333 : tensor<8x16x256xf32>
    %cst_63 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %335 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %336 = stablehlo.multiply %332, %335 : tensor<8x16x256xf32>
    %337 = mhlo.erf %336 : tensor<8x16x256xf32>
    %cst_64 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %338 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %339 = stablehlo.add %337, %338 : tensor<8x16x256xf32>
    %340 = stablehlo.multiply %334, %339 : tensor<8x16x256xf32>
    %341 = stablehlo.reshape %340 : (tensor<8x16x256xf32>) -> tensor<128x256xf32>
    %342 = stablehlo.transpose %arg4, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,64]{0,1}"} : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %343 = stablehlo.dot %341, %342, precision = [DEFAULT, DEFAULT] : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
    %344 = stablehlo.reshape %343 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_65 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %345 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %346 = stablehlo.multiply %arg3, %345 : tensor<64xf32>
    %347 = stablehlo.broadcast_in_dim %346, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %348 = stablehlo.add %344, %347 : tensor<8x16x64xf32>
    %cst_66 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %349 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %350 = stablehlo.multiply %348, %349 : tensor<8x16x64xf32>
    %351 = stablehlo.add %307, %350 : tensor<8x16x64xf32>
    %352 = stablehlo.reshape %351 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %cst_67 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %353 = stablehlo.reshape %cst_67 : (tensor<f32>) -> tensor<1xf32>
    %354 = stablehlo.broadcast_in_dim %353, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %355 = stablehlo.reshape %354 : (tensor<1xf32>) -> tensor<f32>
    %356 = stablehlo.broadcast_in_dim %355, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_68 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %357 = stablehlo.reshape %cst_68 : (tensor<f32>) -> tensor<1xf32>
    %358 = stablehlo.broadcast_in_dim %357, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %359 = stablehlo.reshape %358 : (tensor<1xf32>) -> tensor<f32>
    %360 = stablehlo.broadcast_in_dim %359, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %361 = stablehlo.reshape %cst_69 : (tensor<f32>) -> tensor<1xf32>
    %362 = stablehlo.broadcast_in_dim %361, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %363 = stablehlo.reshape %362 : (tensor<1xf32>) -> tensor<f32>
    %364 = stablehlo.broadcast_in_dim %363, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %output_70, %batch_mean_71, %batch_var_72 = "stablehlo.batch_norm_training"(%352, %360, %364) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %cst_73 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %365 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_74 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %366 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %367 = stablehlo.add %batch_var_72, %366 : tensor<128xf32>
    %368 = stablehlo.rsqrt %367 : tensor<128xf32>
    %369 = stablehlo.divide %365, %368 : tensor<128xf32>
    %370 = stablehlo.multiply %369, %369 : tensor<128xf32>
    %cst_75 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %371 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %372 = stablehlo.subtract %370, %371 : tensor<128xf32>
    %373 = stablehlo.concatenate %arg0, %arg0, dim = 1 : (tensor<8x16xi64>, tensor<8x16xi64>) -> tensor<8x32xi64>
    %c_76 = stablehlo.constant dense<0> : tensor<i64>
    %c_77 = stablehlo.constant dense<1> : tensor<i64>
    %374 = stablehlo.dynamic_slice %373, %c_76, %c_77, sizes = [8, 16] : (tensor<8x32xi64>, tensor<i64>, tensor<i64>) -> tensor<8x16xi64>
    %375 = stablehlo.reshape %374 : (tensor<8x16xi64>) -> tensor<128xi64>
    %376 = stablehlo.broadcast_in_dim %375, dims = [0] : (tensor<128xi64>) -> tensor<128x256xi64>
    %377 = stablehlo.iota dim = 1 : tensor<1x256xi64>
    %378 = stablehlo.reshape %377 : (tensor<1x256xi64>) -> tensor<256xi64>
    %379 = stablehlo.broadcast_in_dim %378, dims = [1] : (tensor<256xi64>) -> tensor<128x256xi64>
    %380 = stablehlo.compare EQ, %376, %379 : (tensor<128x256xi64>, tensor<128x256xi64>) -> tensor<128x256xi1>
    %cst_78 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %381 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %cst_79 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %382 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %383 = stablehlo.select %380, %381, %382 : tensor<128x256xi1>, tensor<128x256xf32>
    %384 = stablehlo.negate %383 : tensor<128x256xf32>
    %cst_80 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %385 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<f32>
    %386 = stablehlo.broadcast_in_dim %385, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %387 = stablehlo.multiply %384, %386 : tensor<128x256xf32>
    %c_81 = stablehlo.constant dense<-100> : tensor<i64>
    %388 = stablehlo.broadcast_in_dim %c_81, dims = [] : (tensor<i64>) -> tensor<128xi64>
    %389 = stablehlo.compare NE, %375, %388 : (tensor<128xi64>, tensor<128xi64>) -> tensor<128xi1>
    %390 = stablehlo.broadcast_in_dim %389, dims = [0] : (tensor<128xi1>) -> tensor<128x256xi1>
    %cst_82 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %391 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %cst_83 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %392 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %393 = stablehlo.select %390, %391, %392 : tensor<128x256xi1>, tensor<128x256xf32>
    %394 = stablehlo.multiply %393, %383 : tensor<128x256xf32>
    %395 = stablehlo.multiply %387, %394 : tensor<128x256xf32>
    %cst_84 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %396 = stablehlo.reduce(%394 init: %cst_84) applies stablehlo.add across dimensions = [0, 1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<f32>
    %397 = stablehlo.compare NE, %396, %cst_84 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_85 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %398 = stablehlo.select %397, %396, %cst_85 : tensor<i1>, tensor<f32>
    %399 = stablehlo.broadcast_in_dim %398, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %400 = stablehlo.divide %395, %399 : tensor<128x256xf32>
    %401 = stablehlo.broadcast_in_dim %arg26, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %402 = stablehlo.reshape %output_70 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %403 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %404 = stablehlo.multiply %402, %403 : tensor<8x16x64xf32>
    %c_86 = stablehlo.constant dense<1> : tensor<i64>
    %405 = stablehlo.convert %c_86 : (tensor<i64>) -> tensor<f32>
    %406 = stablehlo.broadcast_in_dim %405, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %407 = stablehlo.multiply %404, %406 : tensor<8x16x64xf32>
    %408 = stablehlo.add %401, %407 : tensor<8x16x64xf32>
    %409 = stablehlo.reshape %408 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %410 = stablehlo.transpose %arg1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,256]{0,1}"} : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %411 = stablehlo.dot %409, %410, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
    %412 = stablehlo.reshape %411 : (tensor<128x256xf32>) -> tensor<8x16x256xf32>
    %413 = stablehlo.reshape %412 : (tensor<8x16x256xf32>) -> tensor<128x256xf32>
    %cst_87 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %414 = stablehlo.reduce(%413 init: %cst_87) applies stablehlo.maximum across dimensions = [1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<128xf32>
    %415 = stablehlo.broadcast_in_dim %414, dims = [0] : (tensor<128xf32>) -> tensor<128x256xf32>
    %416 = stablehlo.subtract %413, %415 : tensor<128x256xf32>
    %417 = stablehlo.exponential %416 : tensor<128x256xf32>
    %cst_88 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %418 = stablehlo.reduce(%417 init: %cst_88) applies stablehlo.add across dimensions = [1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<128xf32>
    %419 = stablehlo.log %418 : tensor<128xf32>
    %420 = stablehlo.broadcast_in_dim %419, dims = [0] : (tensor<128xf32>) -> tensor<128x256xf32>
    %421 = stablehlo.subtract %416, %420 : tensor<128x256xf32>
    %422 = stablehlo.exponential %421 : tensor<128x256xf32>
    %cst_89 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %423 = stablehlo.reduce(%400 init: %cst_89) applies stablehlo.add across dimensions = [1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<128xf32>
    %424 = stablehlo.broadcast_in_dim %423, dims = [0] : (tensor<128xf32>) -> tensor<128x256xf32>
    %425 = stablehlo.multiply %422, %424 : tensor<128x256xf32>
    %426 = stablehlo.subtract %400, %425 : tensor<128x256xf32>
    %427 = stablehlo.reshape %426 : (tensor<128x256xf32>) -> tensor<8x16x256xf32>
    %428 = stablehlo.reshape %427 : (tensor<8x16x256xf32>) -> tensor<128x256xf32>
    %429 = stablehlo.transpose %410, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %430 = stablehlo.dot %428, %429, precision = [DEFAULT, DEFAULT] : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
    %431 = stablehlo.reshape %430 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_90 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %432 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %433 = stablehlo.multiply %arg2, %432 : tensor<64xf32>
    %434 = stablehlo.broadcast_in_dim %433, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %435 = stablehlo.multiply %431, %434 : tensor<8x16x64xf32>
    %436 = stablehlo.reshape %435 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %grad_operand, %grad_scale, %grad_offset = "stablehlo.batch_norm_grad"(%352, %356, %batch_mean_71, %372, %436) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<1x128x64xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %cst_91 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %437 = stablehlo.reshape %cst_91 : (tensor<f32>) -> tensor<1xf32>
    %438 = stablehlo.broadcast_in_dim %437, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %439 = stablehlo.reshape %438 : (tensor<1xf32>) -> tensor<f32>
    %440 = stablehlo.broadcast_in_dim %439, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_92 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %441 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_93 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %442 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %443 = stablehlo.add %batch_var_59, %442 : tensor<128xf32>
    %444 = stablehlo.rsqrt %443 : tensor<128xf32>
    %445 = stablehlo.divide %441, %444 : tensor<128xf32>
    %446 = stablehlo.multiply %445, %445 : tensor<128xf32>
    %cst_94 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %447 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %448 = stablehlo.subtract %446, %447 : tensor<128xf32>
    %449 = stablehlo.reshape %grad_operand : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %450 = stablehlo.reshape %449 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %451 = stablehlo.transpose %342, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %452 = stablehlo.dot %450, %451, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
    %453 = stablehlo.reshape %452 : (tensor<128x256xf32>) -> tensor<8x16x256xf32>
    %cst_95 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %454 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %cst_96 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %455 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %cst_97 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %456 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %457 = stablehlo.multiply %332, %456 : tensor<8x16x256xf32>
    %458 = mhlo.erf %457 : tensor<8x16x256xf32>
    %459 = stablehlo.add %455, %458 : tensor<8x16x256xf32>
    %460 = stablehlo.multiply %454, %459 : tensor<8x16x256xf32>
    %461 = stablehlo.multiply %332, %332 : tensor<8x16x256xf32>
    %462 = stablehlo.negate %cst_95 : tensor<f32>
    %463 = stablehlo.broadcast_in_dim %462, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %464 = stablehlo.multiply %461, %463 : tensor<8x16x256xf32>
    %465 = stablehlo.exponential %464 : tensor<8x16x256xf32>
    %466 = stablehlo.multiply %332, %465 : tensor<8x16x256xf32>
    %cst_98 = stablehlo.constant dense<1.12837923> : tensor<f32>
    %467 = stablehlo.multiply %cst_98, %cst_97 : tensor<f32>
    %468 = stablehlo.multiply %467, %cst_95 : tensor<f32>
    %469 = stablehlo.broadcast_in_dim %468, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %470 = stablehlo.multiply %466, %469 : tensor<8x16x256xf32>
    %471 = stablehlo.add %460, %470 : tensor<8x16x256xf32>
    %472 = stablehlo.multiply %453, %471 : tensor<8x16x256xf32>
    %473 = stablehlo.reshape %472 : (tensor<8x16x256xf32>) -> tensor<128x256xf32>
    %474 = stablehlo.transpose %326, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %475 = stablehlo.dot %473, %474, precision = [DEFAULT, DEFAULT] : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
    %476 = stablehlo.reshape %475 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_99 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %477 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %478 = stablehlo.multiply %arg7, %477 : tensor<64xf32>
    %479 = stablehlo.broadcast_in_dim %478, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %480 = stablehlo.multiply %476, %479 : tensor<8x16x64xf32>
    %481 = stablehlo.reshape %480 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %grad_operand_100, %grad_scale_101, %grad_offset_102 = "stablehlo.batch_norm_grad"(%309, %440, %batch_mean_58, %448, %481) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<1x128x64xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %cst_103 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %482 = stablehlo.reshape %cst_103 : (tensor<f32>) -> tensor<1xf32>
    %483 = stablehlo.broadcast_in_dim %482, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %484 = stablehlo.reshape %483 : (tensor<1xf32>) -> tensor<f32>
    %485 = stablehlo.broadcast_in_dim %484, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_104 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %486 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_105 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %487 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %488 = stablehlo.add %batch_var_41, %487 : tensor<128xf32>
    %489 = stablehlo.rsqrt %488 : tensor<128xf32>
    %490 = stablehlo.divide %486, %489 : tensor<128xf32>
    %491 = stablehlo.multiply %490, %490 : tensor<128xf32>
    %cst_106 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %492 = stablehlo.broadcast_in_dim %cst_106, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %493 = stablehlo.subtract %491, %492 : tensor<128xf32>
    %494 = stablehlo.reshape %grad_operand_100 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %cst_107 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %495 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %496 = stablehlo.multiply %494, %495 : tensor<8x16x64xf32>
    %497 = stablehlo.add %449, %496 : tensor<8x16x64xf32>
    %498 = stablehlo.reshape %497 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %499 = stablehlo.transpose %302, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %500 = stablehlo.dot %498, %499, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %501 = stablehlo.reshape %500 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %502 = stablehlo.reshape %501 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %503 = stablehlo.transpose %502, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %504 = stablehlo.reshape %503 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %505 = stablehlo.transpose %296, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %506 = stablehlo.dot_general %504, %505, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %507 = stablehlo.reshape %506 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %508 = stablehlo.multiply %507, %289 : tensor<8x4x16x16xf32>
    %cst_108 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %509 = stablehlo.reduce(%508 init: %cst_108) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %510 = stablehlo.broadcast_in_dim %509, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %511 = stablehlo.subtract %507, %510 : tensor<8x4x16x16xf32>
    %512 = stablehlo.multiply %289, %511 : tensor<8x4x16x16xf32>
    %513 = stablehlo.reshape %512 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %514 = stablehlo.transpose %234, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %515 = stablehlo.dot_general %513, %514, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %516 = stablehlo.reshape %515 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %517 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %518 = stablehlo.multiply %516, %517 : tensor<8x4x16x16xf32>
    %519 = stablehlo.transpose %518, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{3,1,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %520 = stablehlo.reshape %519 : (tensor<8x16x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %521 = stablehlo.transpose %226, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %522 = stablehlo.dot_general %521, %513, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %523 = stablehlo.reshape %522 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %524 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %525 = stablehlo.multiply %523, %524 : tensor<8x4x16x16xf32>
    %526 = stablehlo.transpose %525, dims = [0, 1, 3, 2] {result_layout = dense<[2, 3, 1, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{2,3,1,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %527 = stablehlo.transpose %526, dims = [0, 2, 1, 3] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{1,3,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %528 = stablehlo.reshape %527 : (tensor<8x16x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %529 = stablehlo.transpose %291, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %530 = stablehlo.dot_general %529, %504, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %531 = stablehlo.reshape %530 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %532 = stablehlo.transpose %531, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{3,1,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %533 = stablehlo.reshape %532 : (tensor<8x16x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %534 = stablehlo.concatenate %520, %528, %533, dim = 2 : (tensor<8x16x1x4x16xf32>, tensor<8x16x1x4x16xf32>, tensor<8x16x1x4x16xf32>) -> tensor<8x16x3x4x16xf32>
    %535 = stablehlo.reshape %534 : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x192xf32>
    %536 = stablehlo.reshape %535 : (tensor<8x16x192xf32>) -> tensor<128x192xf32>
    %537 = stablehlo.transpose %216, dims = [1, 0] : (tensor<64x192xf32>) -> tensor<192x64xf32>
    %538 = stablehlo.dot %536, %537, precision = [DEFAULT, DEFAULT] : (tensor<128x192xf32>, tensor<192x64xf32>) -> tensor<128x64xf32>
    %539 = stablehlo.reshape %538 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_109 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %540 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %541 = stablehlo.multiply %arg10, %540 : tensor<64xf32>
    %542 = stablehlo.broadcast_in_dim %541, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %543 = stablehlo.multiply %539, %542 : tensor<8x16x64xf32>
    %544 = stablehlo.reshape %543 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %grad_operand_110, %grad_scale_111, %grad_offset_112 = "stablehlo.batch_norm_grad"(%199, %485, %batch_mean_40, %493, %544) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<1x128x64xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %cst_113 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %545 = stablehlo.reshape %cst_113 : (tensor<f32>) -> tensor<1xf32>
    %546 = stablehlo.broadcast_in_dim %545, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %547 = stablehlo.reshape %546 : (tensor<1xf32>) -> tensor<f32>
    %548 = stablehlo.broadcast_in_dim %547, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_114 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %549 = stablehlo.broadcast_in_dim %cst_114, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_115 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %550 = stablehlo.broadcast_in_dim %cst_115, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %551 = stablehlo.add %batch_var_29, %550 : tensor<128xf32>
    %552 = stablehlo.rsqrt %551 : tensor<128xf32>
    %553 = stablehlo.divide %549, %552 : tensor<128xf32>
    %554 = stablehlo.multiply %553, %553 : tensor<128xf32>
    %cst_116 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %555 = stablehlo.broadcast_in_dim %cst_116, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %556 = stablehlo.subtract %554, %555 : tensor<128xf32>
    %557 = stablehlo.reshape %grad_operand_110 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %cst_117 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %558 = stablehlo.broadcast_in_dim %cst_117, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %559 = stablehlo.multiply %557, %558 : tensor<8x16x64xf32>
    %560 = stablehlo.add %497, %559 : tensor<8x16x64xf32>
    %561 = stablehlo.reshape %560 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %562 = stablehlo.transpose %188, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %563 = stablehlo.dot %561, %562, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
    %564 = stablehlo.reshape %563 : (tensor<128x256xf32>) -> tensor<8x16x256xf32>
    %cst_118 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %565 = stablehlo.broadcast_in_dim %cst_118, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %cst_119 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %566 = stablehlo.broadcast_in_dim %cst_119, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %cst_120 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %567 = stablehlo.broadcast_in_dim %cst_120, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %568 = stablehlo.multiply %178, %567 : tensor<8x16x256xf32>
    %569 = mhlo.erf %568 : tensor<8x16x256xf32>
    %570 = stablehlo.add %566, %569 : tensor<8x16x256xf32>
    %571 = stablehlo.multiply %565, %570 : tensor<8x16x256xf32>
    %572 = stablehlo.multiply %178, %178 : tensor<8x16x256xf32>
    %573 = stablehlo.negate %cst_118 : tensor<f32>
    %574 = stablehlo.broadcast_in_dim %573, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %575 = stablehlo.multiply %572, %574 : tensor<8x16x256xf32>
    %576 = stablehlo.exponential %575 : tensor<8x16x256xf32>
    %577 = stablehlo.multiply %178, %576 : tensor<8x16x256xf32>
    %cst_121 = stablehlo.constant dense<1.12837923> : tensor<f32>
    %578 = stablehlo.multiply %cst_121, %cst_120 : tensor<f32>
    %579 = stablehlo.multiply %578, %cst_118 : tensor<f32>
    %580 = stablehlo.broadcast_in_dim %579, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %581 = stablehlo.multiply %577, %580 : tensor<8x16x256xf32>
    %582 = stablehlo.add %571, %581 : tensor<8x16x256xf32>
    %583 = stablehlo.multiply %564, %582 : tensor<8x16x256xf32>
    %584 = stablehlo.reshape %583 : (tensor<8x16x256xf32>) -> tensor<128x256xf32>
    %585 = stablehlo.transpose %172, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %586 = stablehlo.dot %584, %585, precision = [DEFAULT, DEFAULT] : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
    %587 = stablehlo.reshape %586 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_122 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %588 = stablehlo.broadcast_in_dim %cst_122, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %589 = stablehlo.multiply %arg15, %588 : tensor<64xf32>
    %590 = stablehlo.broadcast_in_dim %589, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %591 = stablehlo.multiply %587, %590 : tensor<8x16x64xf32>
    %592 = stablehlo.reshape %591 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %grad_operand_123, %grad_scale_124, %grad_offset_125 = "stablehlo.batch_norm_grad"(%155, %548, %batch_mean_28, %556, %592) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<1x128x64xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %cst_126 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %593 = stablehlo.reshape %cst_126 : (tensor<f32>) -> tensor<1xf32>
    %594 = stablehlo.broadcast_in_dim %593, dims = [0] : (tensor<1xf32>) -> tensor<1xf32>
    %595 = stablehlo.reshape %594 : (tensor<1xf32>) -> tensor<f32>
    %596 = stablehlo.broadcast_in_dim %595, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_127 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %597 = stablehlo.broadcast_in_dim %cst_127, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %cst_128 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %598 = stablehlo.broadcast_in_dim %cst_128, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %599 = stablehlo.add %batch_var, %598 : tensor<128xf32>
    %600 = stablehlo.rsqrt %599 : tensor<128xf32>
    %601 = stablehlo.divide %597, %600 : tensor<128xf32>
    %602 = stablehlo.multiply %601, %601 : tensor<128xf32>
    %cst_129 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %603 = stablehlo.broadcast_in_dim %cst_129, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %604 = stablehlo.subtract %602, %603 : tensor<128xf32>
    %605 = stablehlo.reshape %grad_operand_123 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %cst_130 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %606 = stablehlo.broadcast_in_dim %cst_130, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %607 = stablehlo.multiply %605, %606 : tensor<8x16x64xf32>
    %608 = stablehlo.add %560, %607 : tensor<8x16x64xf32>
    %609 = stablehlo.reshape %608 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %610 = stablehlo.transpose %148, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %611 = stablehlo.dot %609, %610, precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %612 = stablehlo.reshape %611 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %613 = stablehlo.reshape %612 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %614 = stablehlo.transpose %613, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{3,1,2,0}"} : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %615 = stablehlo.reshape %614 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %616 = stablehlo.transpose %142, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %617 = stablehlo.dot_general %615, %616, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %618 = stablehlo.reshape %617 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %619 = stablehlo.multiply %618, %135 : tensor<8x4x16x16xf32>
    %cst_131 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %620 = stablehlo.reduce(%619 init: %cst_131) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %621 = stablehlo.broadcast_in_dim %620, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %622 = stablehlo.subtract %618, %621 : tensor<8x4x16x16xf32>
    %623 = stablehlo.multiply %135, %622 : tensor<8x4x16x16xf32>
    %624 = stablehlo.reshape %623 : (tensor<8x4x16x16xf32>) -> tensor<32x16x16xf32>
    %625 = stablehlo.transpose %80, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %626 = stablehlo.dot_general %624, %625, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %627 = stablehlo.reshape %626 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %628 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %629 = stablehlo.multiply %627, %628 : tensor<8x4x16x16xf32>
    %630 = stablehlo.transpose %629, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{3,1,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %631 = stablehlo.reshape %630 : (tensor<8x16x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %632 = stablehlo.transpose %72, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %633 = stablehlo.dot_general %632, %624, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %634 = stablehlo.reshape %633 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %635 = stablehlo.broadcast_in_dim %arg22, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %636 = stablehlo.multiply %634, %635 : tensor<8x4x16x16xf32>
    %637 = stablehlo.transpose %636, dims = [0, 1, 3, 2] {result_layout = dense<[2, 3, 1, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,16,16]{2,3,1,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %638 = stablehlo.transpose %637, dims = [0, 2, 1, 3] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{1,3,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %639 = stablehlo.reshape %638 : (tensor<8x16x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %640 = stablehlo.transpose %137, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[32,16,16]{1,2,0}"} : (tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %641 = stablehlo.dot_general %640, %615, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x16x16xf32>, tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %642 = stablehlo.reshape %641 : (tensor<32x16x16xf32>) -> tensor<8x4x16x16xf32>
    %643 = stablehlo.transpose %642, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,16,4,16]{3,1,2,0}"} : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %644 = stablehlo.reshape %643 : (tensor<8x16x4x16xf32>) -> tensor<8x16x1x4x16xf32>
    %645 = stablehlo.concatenate %631, %639, %644, dim = 2 : (tensor<8x16x1x4x16xf32>, tensor<8x16x1x4x16xf32>, tensor<8x16x1x4x16xf32>) -> tensor<8x16x3x4x16xf32>
    %646 = stablehlo.reshape %645 : (tensor<8x16x3x4x16xf32>) -> tensor<8x16x192xf32>
    %647 = stablehlo.reshape %646 : (tensor<8x16x192xf32>) -> tensor<128x192xf32>
    %648 = stablehlo.transpose %62, dims = [1, 0] : (tensor<64x192xf32>) -> tensor<192x64xf32>
    %649 = stablehlo.dot %647, %648, precision = [DEFAULT, DEFAULT] : (tensor<128x192xf32>, tensor<192x64xf32>) -> tensor<128x64xf32>
    %650 = stablehlo.reshape %649 : (tensor<128x64xf32>) -> tensor<8x16x64xf32>
    %cst_132 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %651 = stablehlo.broadcast_in_dim %cst_132, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %652 = stablehlo.multiply %arg18, %651 : tensor<64xf32>
    %653 = stablehlo.broadcast_in_dim %652, dims = [2] : (tensor<64xf32>) -> tensor<8x16x64xf32>
    %654 = stablehlo.multiply %650, %653 : tensor<8x16x64xf32>
    %655 = stablehlo.reshape %654 : (tensor<8x16x64xf32>) -> tensor<1x128x64xf32>
    %grad_operand_133, %grad_scale_134, %grad_offset_135 = "stablehlo.batch_norm_grad"(%45, %596, %batch_mean, %604, %655) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<1x128x64xf32>) -> (tensor<1x128x64xf32>, tensor<128xf32>, tensor<128xf32>)
    %c_136 = stablehlo.constant dense<128> : tensor<i32>
    %c_137 = stablehlo.constant dense<128> : tensor<i32>
    %c_138 = stablehlo.constant dense<128> : tensor<i32>
    %c_139 = stablehlo.constant dense<128> : tensor<i32>
    %c_140 = stablehlo.constant dense<128> : tensor<i32>
    %c_141 = stablehlo.constant dense<128> : tensor<i32>
    %c_142 = stablehlo.constant dense<128> : tensor<i32>
    %c_143 = stablehlo.constant dense<128> : tensor<i32>
    %c_144 = stablehlo.constant dense<128> : tensor<i32>
    %c_145 = stablehlo.constant dense<128> : tensor<i32>
    %c_146 = stablehlo.constant dense<128> : tensor<i32>
    %c_147 = stablehlo.constant dense<128> : tensor<i32>
    %c_148 = stablehlo.constant dense<128> : tensor<i32>
    %c_149 = stablehlo.constant dense<128> : tensor<i32>
    %656 = stablehlo.broadcast_in_dim %375, dims = [0] : (tensor<128xi64>) -> tensor<128x256xi64>
    %657 = stablehlo.iota dim = 1 : tensor<1x256xi64>
    %658 = stablehlo.reshape %657 : (tensor<1x256xi64>) -> tensor<256xi64>
    %659 = stablehlo.broadcast_in_dim %658, dims = [1] : (tensor<256xi64>) -> tensor<128x256xi64>
    %660 = stablehlo.compare EQ, %656, %659 : (tensor<128x256xi64>, tensor<128x256xi64>) -> tensor<128x256xi1>
    %cst_150 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %661 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %cst_151 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %662 = stablehlo.broadcast_in_dim %cst_151, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %663 = stablehlo.select %660, %661, %662 : tensor<128x256xi1>, tensor<128x256xf32>
    %664 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %665 = stablehlo.compare NE, %663, %664 : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xi1>
    %666 = stablehlo.broadcast_in_dim %cst_151, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %667 = stablehlo.negate %663 : tensor<128x256xf32>
    %668 = stablehlo.multiply %667, %421 : tensor<128x256xf32>
    %669 = stablehlo.select %665, %666, %668 : tensor<128x256xi1>, tensor<128x256xf32>
    %c_152 = stablehlo.constant dense<-100> : tensor<i64>
    %670 = stablehlo.broadcast_in_dim %c_152, dims = [] : (tensor<i64>) -> tensor<128xi64>
    %671 = stablehlo.compare NE, %375, %670 : (tensor<128xi64>, tensor<128xi64>) -> tensor<128xi1>
    %672 = stablehlo.broadcast_in_dim %671, dims = [0] : (tensor<128xi1>) -> tensor<128x256xi1>
    %cst_153 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %673 = stablehlo.broadcast_in_dim %cst_153, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %cst_154 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %674 = stablehlo.broadcast_in_dim %cst_154, dims = [] : (tensor<f32>) -> tensor<128x256xf32>
    %675 = stablehlo.select %672, %673, %674 : tensor<128x256xi1>, tensor<128x256xf32>
    %676 = stablehlo.multiply %675, %663 : tensor<128x256xf32>
    %677 = stablehlo.multiply %669, %676 : tensor<128x256xf32>
    %678 = stablehlo.reduce(%677 init: %cst_151) applies stablehlo.add across dimensions = [0, 1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<f32>
    %cst_155 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %679 = stablehlo.reduce(%676 init: %cst_155) applies stablehlo.add across dimensions = [0, 1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<f32>
    %680 = stablehlo.divide %678, %679 : tensor<f32>
    %cst_156 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %681 = stablehlo.reshape %cst_156 : (tensor<f32>) -> tensor<1x1xf32>
    %682 = stablehlo.broadcast_in_dim %681, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %683 = stablehlo.reshape %682 : (tensor<1x1xf32>) -> tensor<f32>
    %684 = stablehlo.broadcast_in_dim %683, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %685 = stablehlo.reshape %arg0 : (tensor<8x16xi64>) -> tensor<128xi64>
    %c_157 = stablehlo.constant dense<0> : tensor<i64>
    %686 = stablehlo.broadcast_in_dim %c_157, dims = [] : (tensor<i64>) -> tensor<128xi64>
    %687 = stablehlo.compare LT, %685, %686 : (tensor<128xi64>, tensor<128xi64>) -> tensor<128xi1>
    %688 = stablehlo.reshape %arg28 : (tensor<i64>) -> tensor<1xi64>
    %689 = stablehlo.broadcast_in_dim %688, dims = [0] : (tensor<1xi64>) -> tensor<1xi64>
    %690 = stablehlo.reshape %689 : (tensor<1xi64>) -> tensor<i64>
    %691 = stablehlo.broadcast_in_dim %690, dims = [] : (tensor<i64>) -> tensor<128xi64>
    %692 = stablehlo.add %685, %691 : tensor<128xi64>
    %693 = stablehlo.select %687, %692, %685 : tensor<128xi1>, tensor<128xi64>
    %694 = stablehlo.reshape %693 : (tensor<128xi64>) -> tensor<128x1xi64>
    %695 = stablehlo.concatenate %694, dim = 1 : (tensor<128x1xi64>) -> tensor<128x1xi64>
    %c_158 = stablehlo.constant dense<-1> : tensor<i64>
    %696 = stablehlo.broadcast_in_dim %c_158, dims = [] : (tensor<i64>) -> tensor<128xi64>
    %697 = stablehlo.compare NE, %685, %696 : (tensor<128xi64>, tensor<128xi64>) -> tensor<128xi1>
    %698 = stablehlo.reshape %697 : (tensor<128xi1>) -> tensor<128x1xi1>
    %699 = stablehlo.broadcast_in_dim %698, dims = [0, 1] : (tensor<128x1xi1>) -> tensor<128x1xi1>
    %700 = stablehlo.reshape %699 : (tensor<128x1xi1>) -> tensor<128xi1>
    %701 = stablehlo.broadcast_in_dim %700, dims = [0] : (tensor<128xi1>) -> tensor<128x64xi1>
    %702 = stablehlo.reshape %grad_operand_133 : (tensor<1x128x64xf32>) -> tensor<8x16x64xf32>
    %cst_159 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %703 = stablehlo.broadcast_in_dim %cst_159, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %704 = stablehlo.multiply %702, %703 : tensor<8x16x64xf32>
    %705 = stablehlo.add %608, %704 : tensor<8x16x64xf32>
    %706 = stablehlo.reshape %705 : (tensor<8x16x64xf32>) -> tensor<128x64xf32>
    %cst_160 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %707 = stablehlo.reshape %cst_160 : (tensor<f32>) -> tensor<1x1xf32>
    %708 = stablehlo.broadcast_in_dim %707, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %709 = stablehlo.reshape %708 : (tensor<1x1xf32>) -> tensor<f32>
    %710 = stablehlo.broadcast_in_dim %709, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %711 = stablehlo.select %701, %706, %710 : tensor<128x64xi1>, tensor<128x64xf32>
    %712 = stablehlo.broadcast_in_dim %711, dims = [0, 1] : (tensor<128x64xf32>) -> tensor<128x64xf32>
    %713 = "stablehlo.scatter"(%684, %695, %712) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg29: tensor<f32>, %arg30: tensor<f32>):
      %883 = stablehlo.add %arg29, %arg30 : tensor<f32>
      stablehlo.return %883 : tensor<f32>
    }) : (tensor<256x64xf32>, tensor<128x1xi64>, tensor<128x64xf32>) -> tensor<256x64xf32>
    %714 = stablehlo.transpose %713, dims = [0, 1] : (tensor<256x64xf32>) -> tensor<256x64xf32>
    %715 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %716 = stablehlo.multiply %714, %715 : tensor<256x64xf32>
    %717 = stablehlo.add %arg19, %716 : tensor<256x64xf32>
    %718 = stablehlo.custom_call @Sharding(%717) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<256x64xf32>) -> tensor<256x64xf32>
    %cst_161 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %719 = stablehlo.broadcast_in_dim %cst_161, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %720 = stablehlo.multiply %54, %719 : tensor<8x16x64xf32>
    %721 = stablehlo.multiply %650, %720 : tensor<8x16x64xf32>
    %cst_162 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %722 = stablehlo.reduce(%721 init: %cst_162) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %723 = stablehlo.reshape %722 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %724 = stablehlo.reshape %723 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %725 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %726 = stablehlo.multiply %724, %725 : tensor<64xf32>
    %727 = stablehlo.add %arg18, %726 : tensor<64xf32>
    %cst_163 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %728 = stablehlo.reduce(%650 init: %cst_163) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %729 = stablehlo.reshape %728 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %730 = stablehlo.reshape %729 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %731 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %732 = stablehlo.multiply %730, %731 : tensor<64xf32>
    %733 = stablehlo.add %arg20, %732 : tensor<64xf32>
    %734 = stablehlo.transpose %61, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %735 = stablehlo.dot %734, %647, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x192xf32>) -> tensor<64x192xf32>
    %736 = stablehlo.transpose %735, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[192,64]{0,1}"} : (tensor<64x192xf32>) -> tensor<192x64xf32>
    %737 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<192x64xf32>
    %738 = stablehlo.multiply %736, %737 : tensor<192x64xf32>
    %739 = stablehlo.add %arg17, %738 : tensor<192x64xf32>
    %740 = stablehlo.custom_call @Sharding(%739) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<192x64xf32>) -> tensor<192x64xf32>
    %741 = stablehlo.transpose %147, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %742 = stablehlo.dot %741, %609, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
    %743 = stablehlo.transpose %742, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,64]{0,1}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %744 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %745 = stablehlo.multiply %743, %744 : tensor<64x64xf32>
    %746 = stablehlo.add %arg16, %745 : tensor<64x64xf32>
    %747 = stablehlo.custom_call @Sharding(%746) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %cst_164 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %748 = stablehlo.broadcast_in_dim %cst_164, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %749 = stablehlo.multiply %164, %748 : tensor<8x16x64xf32>
    %750 = stablehlo.multiply %587, %749 : tensor<8x16x64xf32>
    %cst_165 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %751 = stablehlo.reduce(%750 init: %cst_165) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %752 = stablehlo.reshape %751 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %753 = stablehlo.reshape %752 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %754 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %755 = stablehlo.multiply %753, %754 : tensor<64xf32>
    %756 = stablehlo.add %arg15, %755 : tensor<64xf32>
    %cst_166 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %757 = stablehlo.reduce(%587 init: %cst_166) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %758 = stablehlo.reshape %757 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %759 = stablehlo.reshape %758 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %760 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %761 = stablehlo.multiply %759, %760 : tensor<64xf32>
    %762 = stablehlo.add %arg23, %761 : tensor<64xf32>
    %763 = stablehlo.transpose %171, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %764 = stablehlo.dot %763, %584, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
    %765 = stablehlo.transpose %764, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,64]{0,1}"} : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %766 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %767 = stablehlo.multiply %765, %766 : tensor<256x64xf32>
    %768 = stablehlo.add %arg14, %767 : tensor<256x64xf32>
    %769 = stablehlo.custom_call @Sharding(%768) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<256x64xf32>) -> tensor<256x64xf32>
    %cst_167 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %770 = stablehlo.reduce(%583 init: %cst_167) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x256xf32>, tensor<f32>) -> tensor<256xf32>
    %771 = stablehlo.reshape %770 : (tensor<256xf32>) -> tensor<1x1x256xf32>
    %772 = stablehlo.reshape %771 : (tensor<1x1x256xf32>) -> tensor<256xf32>
    %773 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %774 = stablehlo.multiply %772, %773 : tensor<256xf32>
    %775 = stablehlo.add %arg13, %774 : tensor<256xf32>
    %776 = stablehlo.custom_call @Sharding(%775) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<256xf32>) -> tensor<256xf32>
    %777 = stablehlo.transpose %187, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,128]{0,1}"} : (tensor<128x256xf32>) -> tensor<256x128xf32>
    %778 = stablehlo.dot %777, %561, precision = [DEFAULT, DEFAULT] : (tensor<256x128xf32>, tensor<128x64xf32>) -> tensor<256x64xf32>
    %779 = stablehlo.transpose %778, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,256]{0,1}"} : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %780 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %781 = stablehlo.multiply %779, %780 : tensor<64x256xf32>
    %782 = stablehlo.add %arg12, %781 : tensor<64x256xf32>
    %783 = stablehlo.custom_call @Sharding(%782) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %cst_168 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %784 = stablehlo.reduce(%560 init: %cst_168) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %785 = stablehlo.reshape %784 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %786 = stablehlo.reshape %785 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %787 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %788 = stablehlo.multiply %786, %787 : tensor<64xf32>
    %789 = stablehlo.add %arg11, %788 : tensor<64xf32>
    %cst_169 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %790 = stablehlo.broadcast_in_dim %cst_169, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %791 = stablehlo.multiply %208, %790 : tensor<8x16x64xf32>
    %792 = stablehlo.multiply %539, %791 : tensor<8x16x64xf32>
    %cst_170 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %793 = stablehlo.reduce(%792 init: %cst_170) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %794 = stablehlo.reshape %793 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %795 = stablehlo.reshape %794 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %796 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %797 = stablehlo.multiply %795, %796 : tensor<64xf32>
    %798 = stablehlo.add %arg10, %797 : tensor<64xf32>
    %cst_171 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %799 = stablehlo.reduce(%539 init: %cst_171) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %800 = stablehlo.reshape %799 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %801 = stablehlo.reshape %800 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %802 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %803 = stablehlo.multiply %801, %802 : tensor<64xf32>
    %804 = stablehlo.add %arg24, %803 : tensor<64xf32>
    %805 = stablehlo.transpose %215, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %806 = stablehlo.dot %805, %536, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x192xf32>) -> tensor<64x192xf32>
    %807 = stablehlo.transpose %806, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[192,64]{0,1}"} : (tensor<64x192xf32>) -> tensor<192x64xf32>
    %808 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<192x64xf32>
    %809 = stablehlo.multiply %807, %808 : tensor<192x64xf32>
    %810 = stablehlo.add %arg9, %809 : tensor<192x64xf32>
    %811 = stablehlo.custom_call @Sharding(%810) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<192x64xf32>) -> tensor<192x64xf32>
    %812 = stablehlo.transpose %301, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %813 = stablehlo.dot %812, %498, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
    %814 = stablehlo.transpose %813, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,64]{0,1}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %815 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %816 = stablehlo.multiply %814, %815 : tensor<64x64xf32>
    %817 = stablehlo.add %arg8, %816 : tensor<64x64xf32>
    %818 = stablehlo.custom_call @Sharding(%817) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %cst_172 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %819 = stablehlo.broadcast_in_dim %cst_172, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %820 = stablehlo.multiply %318, %819 : tensor<8x16x64xf32>
    %821 = stablehlo.multiply %476, %820 : tensor<8x16x64xf32>
    %cst_173 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %822 = stablehlo.reduce(%821 init: %cst_173) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %823 = stablehlo.reshape %822 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %824 = stablehlo.reshape %823 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %825 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %826 = stablehlo.multiply %824, %825 : tensor<64xf32>
    %827 = stablehlo.add %arg7, %826 : tensor<64xf32>
    %cst_174 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %828 = stablehlo.reduce(%476 init: %cst_174) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %829 = stablehlo.reshape %828 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %830 = stablehlo.reshape %829 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %831 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %832 = stablehlo.multiply %830, %831 : tensor<64xf32>
    %833 = stablehlo.add %arg25, %832 : tensor<64xf32>
    %834 = stablehlo.transpose %325, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %835 = stablehlo.dot %834, %473, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
    %836 = stablehlo.transpose %835, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,64]{0,1}"} : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %837 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %838 = stablehlo.multiply %836, %837 : tensor<256x64xf32>
    %839 = stablehlo.add %arg6, %838 : tensor<256x64xf32>
    %840 = stablehlo.custom_call @Sharding(%839) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<256x64xf32>) -> tensor<256x64xf32>
    %cst_175 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %841 = stablehlo.reduce(%472 init: %cst_175) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x256xf32>, tensor<f32>) -> tensor<256xf32>
    %842 = stablehlo.reshape %841 : (tensor<256xf32>) -> tensor<1x1x256xf32>
    %843 = stablehlo.reshape %842 : (tensor<1x1x256xf32>) -> tensor<256xf32>
    %844 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %845 = stablehlo.multiply %843, %844 : tensor<256xf32>
    %846 = stablehlo.add %arg5, %845 : tensor<256xf32>
    %847 = stablehlo.custom_call @Sharding(%846) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<256xf32>) -> tensor<256xf32>
    %848 = stablehlo.transpose %341, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,128]{0,1}"} : (tensor<128x256xf32>) -> tensor<256x128xf32>
    %849 = stablehlo.dot %848, %450, precision = [DEFAULT, DEFAULT] : (tensor<256x128xf32>, tensor<128x64xf32>) -> tensor<256x64xf32>
    %850 = stablehlo.transpose %849, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,256]{0,1}"} : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %851 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %852 = stablehlo.multiply %850, %851 : tensor<64x256xf32>
    %853 = stablehlo.add %arg4, %852 : tensor<64x256xf32>
    %854 = stablehlo.custom_call @Sharding(%853) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %cst_176 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %855 = stablehlo.reduce(%449 init: %cst_176) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %856 = stablehlo.reshape %855 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %857 = stablehlo.reshape %856 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %858 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %859 = stablehlo.multiply %857, %858 : tensor<64xf32>
    %860 = stablehlo.add %arg3, %859 : tensor<64xf32>
    %cst_177 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %861 = stablehlo.broadcast_in_dim %cst_177, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %862 = stablehlo.multiply %402, %861 : tensor<8x16x64xf32>
    %863 = stablehlo.multiply %431, %862 : tensor<8x16x64xf32>
    %cst_178 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %864 = stablehlo.reduce(%863 init: %cst_178) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %865 = stablehlo.reshape %864 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %866 = stablehlo.reshape %865 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %867 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %868 = stablehlo.multiply %866, %867 : tensor<64xf32>
    %869 = stablehlo.add %arg2, %868 : tensor<64xf32>
    %cst_179 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %870 = stablehlo.reduce(%431 init: %cst_179) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %871 = stablehlo.reshape %870 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %872 = stablehlo.reshape %871 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    %873 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %874 = stablehlo.multiply %872, %873 : tensor<64xf32>
    %875 = stablehlo.add %arg26, %874 : tensor<64xf32>
    %876 = stablehlo.transpose %409, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,128]{0,1}"} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %877 = stablehlo.dot %876, %428, precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
    %878 = stablehlo.transpose %877, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[256,64]{0,1}"} : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %879 = stablehlo.broadcast_in_dim %arg27, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %880 = stablehlo.multiply %878, %879 : tensor<256x64xf32>
    %881 = stablehlo.add %arg1, %880 : tensor<256x64xf32>
    %882 = stablehlo.custom_call @Sharding(%881) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<256x64xf32>) -> tensor<256x64xf32>
    return %374, %411, %412, %680, %718, %727, %733, %740, %747, %756, %762, %769, %776, %783, %789, %798, %804, %811, %818, %827, %833, %840, %847, %854, %860, %869, %875, %882 : tensor<8x16xi64>, tensor<128x256xf32>, tensor<8x16x256xf32>, tensor<f32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<192x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<192x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>
  }
}
