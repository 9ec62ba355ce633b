"""Calls of nested jaxprs: jit (pjit), remat, custom_jvp_call, custom_vjp_call
-> their body inlined (custom derivatives: the primal computation; jax.nn.relu, gelu, softplus,
silu, logsumexp are custom_jvp or jitted)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import Sample, exporter

from ._samples import randn

_X = randn(2, 3, 4)


@jax.custom_vjp
def _clip_gradient(x):
    return jnp.sin(x) * 2


_clip_gradient.defvjp(lambda x: (_clip_gradient(x), x), lambda x, gr: (jnp.clip(gr, -1, 1),))


@jax.custom_jvp
def _softclip(x):
    return jnp.tanh(x) * 3


_softclip.defjvp(lambda primals, tangents: (_softclip(primals[0]), tangents[0]))


@exporter("lax.jit", samples=[Sample(lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x), (_X,), emits=("Sin", "Mul")),
                              Sample(jax.nn.softplus, (_X,), emits=("Exp",), name="softplus"),
                              Sample(jax.nn.silu, (_X,), emits=("Sigmoid", "Mul"), name="silu"),
                              ])
def call(g, *args, **params):
    """The called jaxpr, inlined; with ``functions=True`` a call of a model-local function."""
    body = params.get("jaxpr", params.get("call_jaxpr"))
    if g.converter.as_function(body):
        return tuple(g.converter.call_function(g, str(params.get("name") or "jit"), body, args))
    outs = g.inline(body, args)
    return tuple(outs)


@exporter("lax.remat2", samples=[Sample(jax.checkpoint(lambda x: jnp.sin(x) * x), (_X,), emits=("Sin",))])
def remat(g, *args, jaxpr, **_):
    """Rematerialization only changes how gradients are computed: the body, inlined."""
    return tuple(g.inline(jaxpr, args))


@exporter("lax.custom_jvp_call", samples=[
    Sample(jax.nn.relu, (_X,), emits=("Max",)),
    Sample(lambda x: _softclip(x) * 2, (_X,), emits=("Tanh",), name="user"),
])
def custom_jvp_call(g, *args, call_jaxpr, num_consts=0, **_):
    """The primal computation (the custom derivative only matters for gradients)."""
    return tuple(g.inline(call_jaxpr, args))


@exporter("lax.custom_vjp_call", samples=[Sample(_clip_gradient, (_X,), emits=("Sin",))])
def custom_vjp_call(g, *args, **params):
    """The primal computation."""
    body = params.get("call_jaxpr", params.get("fun_jaxpr"))
    return tuple(g.inline(body, args))
