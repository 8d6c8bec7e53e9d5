#!/bin/sh
# Seed corpus/<target>/ from the repository (run from fuzz/). For Parquet seeds, also write a
# few of the CSVs as Parquet into corpus/load_csv/ (the first runs used linnerud, iris and slump
# through `ovk::data::write_parquet` in a throwaway example binary; the final runs used pyarrow,
# see README.md). The corrupt Parquet files of tests/data/bad/ are copied here.
set -e
R=..
C=corpus
mkdir -p $C/load_csv $C/config $C/session $C/sizes $C/candidates $C/session_model
for s in 17e9 1GB 512MiB 4G abc -1 1..8 1..40:5 2,5,10 3,3,3 1..4000000000 1..18446744073709551615; do
  printf '%s' "$s" > "$C/sizes/$s"
done
cp $R/tests/data/bad/*.csv $R/tests/data/bad/*.parquet $C/load_csv/
for f in linnerud iris slump wine; do cp $R/datasets/$f.csv $C/load_csv/; done
printf 'a\tb\tc\n1\t2\t3\n' > $C/load_csv/tab.tsv
printf '\001a\tb\n1\t2\n' > $C/load_csv/tab_prefixed
cp $R/tests/data/bad/*.toml $R/datasets/*.toml $C/config/
printf 'data = "datasets/linnerud.csv"\nmethod = "okl"\ntargets = ["target_weight"]\nlambda = 0.1\ncv_folds = 5\ncv_fold = 1\n' > $C/config/run.toml
printf 'data = "d.csv"\nmethod = ["krr", "okl"]\nlambda = { log = [1e-4, 1e1], n = 6 }\nsigma = { lin = [0.5, 2], n = 3 }\ncv = 3\njobs = 2\n' > $C/config/sweep.toml
for d in $R/sessions/*/; do
  n=$(basename "$d")
  for m in output_kernel predictions_test; do
    [ -f "$d/$m.npy" ] && cat "$d/session.json" "$d/$m.npy" > "$C/session/$n-$m"
  done
done
cat $R/sessions/20261121-080316-linnerud-okl/session.json $R/tests/data/bad/huge_shape.npy > $C/session/huge_shape
# kde candidates: the corrupt tables, and output columns of real data sets.
cp $R/tests/data/bad/*.csv $R/tests/data/bad/*.parquet $C/candidates/
printf 'a,b\n1,2\n3,4\n' > $C/candidates/ab.csv
printf 'a,b\n1,\n3,x\n' > $C/candidates/gaps.csv
for f in linnerud slump; do cp $R/datasets/$f.csv $C/candidates/; done
# Sessions with their models: session.json, then each model array in the order it lists them
# (the target cuts the bytes at each .npy magic).
for d in $R/sessions/*/; do
  n=$(basename "$d")
  arrays=$(sed -n 's/.*"arrays": *\[\([^]]*\)\].*/\1/p' "$d/session.json" | tr -d '" ' | tr ',' ' ')
  [ -n "$arrays" ] || continue
  { cat "$d/session.json"; for a in $arrays; do cat "$d/model_$a.npy"; done; } > "$C/session_model/$n"
done
