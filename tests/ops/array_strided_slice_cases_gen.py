#!/usr/bin/env python3
"""Regenerates array_strided_slice_cases.inc with TensorFlow (not run by the
tests): random StridedSlice specs on np.arange(60).reshape(3, 4, 5).

    cd tests/ops && python3 array_strided_slice_cases_gen.py
"""
import random, numpy as np, os
os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"
import tensorflow as tf
random.seed(7)
x = np.arange(60, dtype=np.int32).reshape(3,4,5)
cases=[]
tries=0
while len(cases) < 120:
    tries+=1
    n = random.randint(1,4)
    b=[random.randint(-6,6) for _ in range(n)]
    e=[random.randint(-6,6) for _ in range(n)]
    s=[random.choice([-3,-2,-1,1,1,1,2,3]) for _ in range(n)]
    m=[random.randint(0,(1<<n)-1) if random.random()<0.5 else 0 for _ in range(5)]
    if random.random()<0.6: m[2]=0
    else:
        m[2] = 1<<random.randint(0,n-1)
    if random.random()<0.6: m[3]=0
    if random.random()<0.5: m[4]=0
    try:
        y = tf.raw_ops.StridedSlice(input=x, begin=b, end=e, strides=s, begin_mask=m[0], end_mask=m[1], ellipsis_mask=m[2], new_axis_mask=m[3], shrink_axis_mask=m[4]).numpy()
        err=0; shape=list(y.shape); vals=y.flatten().tolist()
    except Exception as ex:
        err=1; shape=[]; vals=[]
    if err and sum(c[5] for c in cases) > 20: continue
    cases.append((b,e,s,m,shape,err,vals))
def arr(v): return "{" + ",".join(str(i) for i in v) + "}"
with open("array_strided_slice_cases.inc","w") as f:
    f.write("// Generated with TensorFlow 2.21: tf.raw_ops.StridedSlice on\n// np.arange(60).reshape(3, 4, 5) (int32). Fields: begin, end, strides,\n// {begin, end, ellipsis, new_axis, shrink} masks, output shape, error?, values.\n")
    for b,e,s,m,shape,err,vals in cases:
        f.write("{%s, %s, %s, %s, %s, %s, %s},\n" % (arr(b),arr(e),arr(s),arr(m),arr(shape),"true" if err else "false",arr(vals)))
print(sum(c[5] for c in cases), "errors of", len(cases))
