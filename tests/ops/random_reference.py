"""JAX's values for the keys and draws that random_test.cpp checks (run with a Python that
has jax: pip install jax). sluice follows JAX's classic threefry scheme, so the script turns
off jax_threefry_partitionable, the default since JAX 0.5."""
import jax
import numpy as np

jax.config.update("jax_threefry_partitionable", False)
jax.config.update("jax_enable_x64", True)
key = jax.random.PRNGKey(0)
print("split", np.asarray(jax.random.split(key, 2)).ravel().tolist())
print("uniform f32", [float(v) for v in jax.random.uniform(jax.random.PRNGKey(7), (5,), np.float32, -2, 3)])
print("normal f32", [float(v) for v in jax.random.normal(jax.random.PRNGKey(3), (5,), np.float32)])
print("uniform f64", [float(v) for v in jax.random.uniform(jax.random.PRNGKey(7), (5,), np.float64)])
print("normal f64", [float(v) for v in jax.random.normal(jax.random.PRNGKey(3), (5,), np.float64)])
# 16-bit floats (JAX draws 16 bits per f16 value and 8 per bf16 one).
print("uniform bf16 of key [4290683981, 2994753282]",
      float(jax.random.uniform(jax.random.wrap_key_data(np.array([4290683981, 2994753282], np.uint32)), (), jax.numpy.bfloat16)))
print("uniform f16", [float(v) for v in jax.random.uniform(jax.random.PRNGKey(7), (5,), np.float16)])
print("uniform bf16", [float(v) for v in jax.random.uniform(jax.random.PRNGKey(7), (5,), jax.numpy.bfloat16)])
print("uniform f16 [-2, 3)", [float(v) for v in jax.random.uniform(jax.random.PRNGKey(7), (7,), np.float16, -2, 3)])
print("normal f16", [float(v) for v in jax.random.normal(jax.random.PRNGKey(3), (5,), np.float16)])
print("normal bf16", [float(v) for v in jax.random.normal(jax.random.PRNGKey(3), (5,), jax.numpy.bfloat16)])
