ROW_01 =    7
ROW_02 =   14
ROW_03 =   21
ROW_04 =   28
ROW_05 =   35
ROW_06 =   42
ROW_07 =   49
ROW_08 =   56
ROW_09 =   63
ROW_10 =   70
ROW_11 =   77
ROW_12 =   84
ROW_13 =   91
ROW_14 =   98
ROW_
