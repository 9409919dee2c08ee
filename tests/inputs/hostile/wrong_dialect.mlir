module {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = nosuchdialect.frob %arg0 : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
