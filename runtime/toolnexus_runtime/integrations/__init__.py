"""A generated Toolkit inside the agent frameworks teams run: pydantic-ai, the OpenAI Agents SDK,
LangChain / LangGraph, Google ADK, CrewAI, LlamaIndex, smolagents, Strands Agents and AutoGen.
One module per framework; each framework is imported only when its function is called.

In each, the framework sends the model exactly the checked-in schema (the OpenAI Responses
definition, Gemini's declarations for ADK, Bedrock's `toolSpec` for Strands, the generated
argument model where a framework takes a pydantic model), every call goes through
`Toolkit.execute` (validated by the generated model, traced when the toolkit is instrumented),
the call id reaches `ToolContext.call_id` where the framework has one, and an error result
reaches the model in the framework's own correctable form, never as an exception that ends the
run.
"""

from .autogen import autogen_tools
from .crewai import crewai_tools
from .google_adk import google_adk_tools, google_adk_toolset
from .langchain import langchain_tool_schemas, langchain_tools
from .llama_index import llama_index_tools
from .openai_agents import openai_agents_tools
from .pydantic_ai import pydantic_ai_toolset
from .smolagents import smolagents_tools
from .strands import strands_tools

__all__ = [
    "autogen_tools",
    "crewai_tools",
    "google_adk_tools",
    "google_adk_toolset",
    "langchain_tool_schemas",
    "langchain_tools",
    "llama_index_tools",
    "openai_agents_tools",
    "pydantic_ai_toolset",
    "smolagents_tools",
    "strands_tools",
]
